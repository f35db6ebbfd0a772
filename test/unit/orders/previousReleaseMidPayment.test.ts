import { describe, expect, it } from 'vitest';
import { create, fingerprintPayload, replace } from '../../../src/idempotency/index.js';
import type { StoredDocument, WriteOperation } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { parkingLot } from '../../../src/orders/parkedItems.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// During a deploy an instance of the release before claims applies payments as it always did: its
// inbox marker and the order (every field it does not know kept), no claim. A copy of this release
// looks for such a payment before it claims; these schedules put the old instance's write after that
// look, between this copy's read of the order and its etag-guarded batch.
type Flow = ReturnType<typeof orderFlow>;
const writes = (id: string) => (_pk: string, operations: readonly WriteOperation[]) => operations.some((op) => op.document.id === id);
const payment = paymentReceived('o1', { paymentId: 'P-1', amount: 5 });

/** What the release before claims (test/fixtures/stored-formats/v1) writes for a payment: marker and order in one batch. */
async function previousReleaseApplies(t: Flow, messageId: string, body: typeof payment): Promise<void> {
  const current = await t.memory.read<OrderDocument>('o1', 'o1');
  const order = { ...current!.document, amountPaid: current!.document.amountPaid + body.amount, paymentCount: current!.document.paymentCount + 1 };
  const marker = {
    id: `inbox|${messageId}`,
    orderId: 'o1',
    docType: 'inbox',
    messageType: 'PaymentReceived',
    messageId,
    dedupKey: messageId,
    fingerprint: fingerprintPayload('PaymentReceived', body),
    processedAt: t.ctx.now().toISOString(),
    payload: body,
    ttl: t.ctx.markerTtlSeconds,
  } as StoredDocument;
  expect((await t.memory.commit('o1', [create(marker), replace(order, current!.etag)])).kind).toBe('committed');
}

/** What the release before claims writes to park a payment whose order is missing: its item (no claim) and an unmarked open gate. */
async function previousReleaseParks(t: Flow, messageId: string, body: typeof payment): Promise<void> {
  const item = {
    id: `parked|payment|${messageId}`,
    orderId: 'o1',
    docType: 'parked',
    state: 'parked',
    messageType: 'PaymentReceived',
    messageId,
    dedupKey: messageId,
    fingerprint: fingerprintPayload('PaymentReceived', body),
    payload: body,
    parkedAt: t.ctx.now().toISOString(),
  } as StoredDocument;
  expect((await t.memory.commit('o1', [create(item), create(parkingLot('o1', 'open', t.ctx.now().toISOString()))])).kind).toBe('committed');
}

describe('a copy of the release before claims applies the payment while this release is on its way to its effect', () => {
  it('between the order read and the batch (412, read again): a duplicate, counted once', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
    t.store.beforeCommit(writes('inbox|pay-1'), () => previousReleaseApplies(t, 'pay-1-copy', payment));
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('while this copy parks (its order missing), the order comes and the old instance counts a copy: a duplicate, counted once', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    t.store.beforeCommit(writes('parked|payment|pay-1'), async () => {
      expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
      await previousReleaseApplies(t, 'pay-1-copy', payment);
    });
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('another payment under the paymentId, written by the old instance meanwhile: a conflict, counted once', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
    t.store.beforeCommit(writes('inbox|pay-1'), () => previousReleaseApplies(t, 'pay-9', { ...payment, amount: 7 }));
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 7, paymentCount: 1 });
  });

  it('a payment of its own, another paymentId, written by the old instance meanwhile: both counted', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
    t.store.beforeCommit(writes('inbox|pay-1'), () => previousReleaseApplies(t, 'pay-9', { ...payment, paymentId: 'P-9', amount: 7 }));
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 12, paymentCount: 2, claimedPaymentCount: 1 });
  });

  it('while this copy parks, the old instance parks a copy under another key and opens the gate first: a duplicate, parked and counted once', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    t.store.beforeCommit(writes('parked|payment|pay-1'), () => previousReleaseParks(t, 'pay-1-copy', payment));
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('duplicate');
    expect(t.parked('o1').map((i) => i.dedupKey)).toEqual(['pay-1-copy']);
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});
