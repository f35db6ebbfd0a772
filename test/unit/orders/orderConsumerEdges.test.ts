import { describe, expect, it } from 'vitest';
import { TransientStoreError, create, fingerprintPayload } from '../../../src/idempotency/index.js';
import { newOrderDocument } from '../../../src/orders/documents.js';
import type { OrderDocument } from '../../../src/orders/documents.js';
import { parkingLotId, rejectedMessagesPartition, rejectionDocumentId } from '../../../src/orders/index.js';
import type { OrderPlaced } from '../../../src/orders/index.js';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged } from '../../support/orderMessages.js';

// The order consumer at its edges: what it reports, what it rejects and under which key, orders
// stored by earlier releases, and a status change that meets its order's batch in flight.
type Flow = ReturnType<typeof orderFlow>;

/** An order as a release before status fingerprints stored it: a status version, no fingerprint or message id. */
async function legacyOrder(t: Flow, extra: Partial<OrderDocument> = {}): Promise<void> {
  const order: OrderDocument = {
    ...newOrderDocument(orderPlaced('o1') as OrderPlaced, {
      messageId: 'm-o1',
      dedupKey: 'm-o1',
      fingerprint: 'fp-order',
      processedAt: t.ctx.now().toISOString(),
    }),
    status: 'Paid',
    statusVersion: 2,
    ...extra,
  };
  expect((await t.memory.commit('o1', [create(order)])).kind).toBe('committed');
}

describe('the order consumer, at its edges', () => {
  it('takes a status change at the version an older release stored without a fingerprint as stale, and a newer one as a change', async () => {
    const t = orderFlow();
    await legacyOrder(t);
    expect((await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Cancelled'))).outcome).toEqual({ kind: 'stale', storedVersion: 2 });
    expect((await t.send('st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped'))).outcome).toEqual({ kind: 'created' });
    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 3, statusMessageId: 'st-3' });
  });

  it('names the stored message as unknown in a conflict when the stored status carries none', async () => {
    const t = orderFlow();
    await legacyOrder(t, { statusFingerprint: 'fp-stored' });
    const change = orderStatusChanged('o1', 2, 'Cancelled');
    const result = await t.send('st-2b', 'OrderStatusChanged', change);
    const fingerprint = fingerprintPayload('OrderStatusChanged', change);
    expect(result.outcome).toMatchObject({
      kind: 'conflict',
      error: {
        description: `OrderStatusChanged for order o1 differs from what is stored in o1 (stored fingerprint fp-stored from message unknown, this one ${fingerprint}); conflict recorded as conflict|st-2b|${fingerprint}`,
      },
    });
  });

  it('applies a status change that read "no order" just before the order landed on the normal path, and parks nothing', async () => {
    const t = orderFlow();
    const parkerBatch = (_pk: string, operations: readonly WriteOperation[]) =>
      operations.some((op) => op.document.id === parkingLotId('o1')) && operations.some((op) => (op.document as { docType?: string }).docType === 'parked');
    t.store.beforeCommit(parkerBatch, async () => void (await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))));
    expect((await t.send('st-1', 'OrderStatusChanged', orderStatusChanged('o1', 1, 'Paid'))).outcome).toEqual({ kind: 'created' });
    expect(await t.order('o1')).toMatchObject({ status: 'Paid', statusVersion: 1 });
    expect(t.parked('o1')).toEqual([]);
  });

  it('records a rejection only for a conflict or an invalid message, never for one it stored', async () => {
    const t = orderFlow();
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
    expect(await t.memory.read('o1', rejectionDocumentId('m-o1'))).toBeUndefined();
    expect(await t.memory.read(rejectedMessagesPartition('m-o1'), rejectionDocumentId('m-o1'))).toBeUndefined();
  });

  it('rejects a message that fails its schema under the key its error names, the MessageId', async () => {
    const t = orderFlow();
    const result = await t.send('m-bad', 'OrderPlaced', { orderId: 'o1' });
    expect(result.outcome).toMatchObject({ kind: 'invalid', error: { code: 'SchemaViolation', dedupKey: 'm-bad' } });
    expect(result.dedupKey).toBe('m-bad');
  });

  it('hands back a store that fails for now with what it knew of the message: its key, type and order', async () => {
    const t = orderFlow();
    t.store.beforeRead(
      () => true,
      () => Promise.reject(new TransientStoreError('the store answered 503', 503)),
    );
    const result = await t.send('pay-1', 'PaymentReceived', {
      orderId: 'o1',
      paymentId: 'pay-1',
      amount: 5,
      currency: 'EUR',
      receivedAt: '2026-11-30T09:00:00Z',
    });
    expect(result).toMatchObject({
      outcome: { kind: 'retry', reason: 'TransientStoreError: the store answered 503' },
      dedupKey: 'pay-1',
      type: 'PaymentReceived',
      orderId: 'o1',
    });
  });

  it('reports the time the delivery took, not more', async () => {
    const t = orderFlow();
    const before = performance.now();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const elapsed = performance.now() - before;
    const durationMs = Number(t.log.lines.at(-1)?.record.durationMs);
    expect(durationMs).toBeGreaterThanOrEqual(0);
    expect(durationMs).toBeLessThanOrEqual(elapsed + 0.01);
  });
});
