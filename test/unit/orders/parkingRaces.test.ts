import { describe, expect, it } from 'vitest';
import { replace } from '../../../src/idempotency/index.js';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import { parkingLotId, sweepParkedItems } from '../../../src/orders/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { touches } from '../../support/interleavingStore.js';
import { orderFlow, parkedItemTtlSeconds, touchGate } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// A parker and the writers it meets between its read of "no order" and its batch: the order's
// batch, other parkers, the sweeper, an operator. Each one is put exactly in that gap.
type Flow = ReturnType<typeof orderFlow>;
const sweepOptions = { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 100 };
const parkerBatch = (_pk: string, operations: readonly WriteOperation[]) =>
  touches('parked')(_pk, operations) && operations.some((op) => (op.document as { docType?: string }).docType === 'parking-lot');

async function setItem(t: Flow, orderId: string, change: Partial<ParkedItemDocument>): Promise<void> {
  const [item] = t.parked(orderId);
  const stored = await t.memory.read<ParkedItemDocument>(orderId, item!.id);
  expect((await t.memory.commit(orderId, [replace({ ...stored!.document, ...change }, stored!.etag)])).kind).toBe('committed');
}

describe('a parker racing other writers', () => {
  it('hands the message back for later when the arrival gate changes under every attempt', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds, maxConcurrencyAttempts: 3 });
    await t.send('pay-a', 'PaymentReceived', paymentReceived('o1', { amount: 1 }));
    t.store.beforeCommit(parkerBatch, () => touchGate(t, 'o1'), 100);
    t.store.commitLog.length = 0;
    const result = await t.send('pay-b', 'PaymentReceived', paymentReceived('o1', { amount: 2 }));
    expect(result.outcome).toEqual({ kind: 'retry', reason: "order o1's arrival gate changed under 3 attempts in a row" });
    // The payment's claim, then the three parking batches.
    expect(t.store.commitLog.map((c) => c.partitionKey)).toEqual([expect.stringMatching(/^#payment\|p-/), 'o1', 'o1', 'o1']);
    expect(t.store.commitLog.filter((c) => parkerBatch(c.partitionKey, c.operations))).toHaveLength(3);
    expect(t.parked('o1')).toHaveLength(1);
  });

  it('a copy that read "no order" while the order batch applied its parked twin is a duplicate, and the item stays applied', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 5 });
    await t.send('pay-1', 'PaymentReceived', pay);
    t.store.beforeCommit(parkerBatch, async () =>
      expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 }),
    );
    expect((await t.send('pay-1', 'PaymentReceived', pay, 2)).outcome).toEqual({ kind: 'duplicate' });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'applied' })]);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a copy whose parked twin runs out between the 409 and the read parks afresh, in the usual round trips', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 5 });
    expect((await t.send('pay-1', 'PaymentReceived', pay)).outcome).toMatchObject({ kind: 'parked' });
    const [item] = t.parked('o1');
    t.store.beforeRead(
      (_pk, id) => id === item!.id,
      async () => t.advance(parkedItemTtlSeconds),
    );
    t.store.commitLog.length = 0;
    const reads = t.store.reads;
    expect((await t.send('pay-1', 'PaymentReceived', pay, 2)).outcome).toEqual({ kind: 'parked', itemId: item!.id });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ id: item!.id, state: 'parked' })]);
    // The claim (409: its own), the claim written again for the parking ahead (claimOutlivesParkedItem.test.ts), the
    // parking batch (409 on the item), the same batch again: the item and its gate created afresh.
    expect(t.store.commitLog.map((c) => c.operations.map((o) => o.kind).join(','))).toEqual(['create', 'replace', 'create,create', 'create,create']);
    expect(t.store.reads - reads).toBe(5);
  });

  it('a copy of an item an operator discarded is a duplicate: it is not parked again', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 5 });
    await t.send('pay-1', 'PaymentReceived', pay);
    await setItem(t, 'o1', { state: 'discarded' });
    expect((await t.send('pay-1', 'PaymentReceived', pay, 2)).outcome).toEqual({ kind: 'duplicate' });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'discarded' })]);
  });

  it('a rejected item that comes back while its order is being stored is marked handed back, and applied once on the normal path', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 9 });
    await t.send('pay-1', 'PaymentReceived', pay);
    t.advance(7200);
    await sweepParkedItems(t.ctx, sweepOptions);
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'rejected' })]);
    // The resubmitted copy finds its rejected item (409), then the order lands before it re-parks it.
    const reParking = (pk: string, operations: readonly WriteOperation[]) => parkerBatch(pk, operations) && operations[0]?.kind === 'replace';
    t.store.beforeCommit(reParking, async () =>
      expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 0 }),
    );
    const resubmitted = await t.send('pay-1~resubmit-1', 'PaymentReceived', pay, 1, { 'idempotency-key': 'pay-1' });
    expect(resubmitted.outcome).toEqual({ kind: 'created' });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'resubmitted', ttl: parkedItemTtlSeconds })]);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 9, paymentCount: 1 });
  });

  it('parks afresh when the item behind its 409 is gone by the time it is read (a ttl ran out, or an operator removed it)', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 5 });
    await t.send('pay-1', 'PaymentReceived', pay);
    await setItem(t, 'o1', { state: 'rejected', ttl: 60 });
    const [item] = t.parked('o1');
    t.store.beforeRead(
      (_pk, id) => id === item!.id,
      async () => void t.advance(61),
    );
    expect((await t.send('pay-1', 'PaymentReceived', pay, 2)).outcome).toEqual({ kind: 'parked', itemId: item!.id });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'parked' })]);
  });

  it('parks when the gate behind its 409 is gone by the time it is read: the sweeper then applies the item to the stored order', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 5 });
    t.store.beforeCommit(parkerBatch, async () => void (await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))));
    // The order's closed gate lives for the marker ttl; here it runs out between the 409 and the read
    // (the gate's second read: the first, before the claim, looks for payments parked before claims).
    let gateReads = 0;
    t.store.beforeRead(
      (_pk, id) => id === parkingLotId('o1') && (gateReads += 1) === 2,
      async () => void t.advance(parkedItemTtlSeconds + 1),
    );
    expect((await t.send('pay-1', 'PaymentReceived', pay)).outcome).toMatchObject({ kind: 'parked' });
    t.advance(120);
    expect(await sweepParkedItems(t.ctx, sweepOptions)).toMatchObject({ applied: 1 });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});
