import { describe, expect, it } from 'vitest';
import { replace } from '../../../src/idempotency/index.js';
import { drainParkedItems } from '../../../src/orders/applyParkedItems.js';
import { inboxMarkerId } from '../../../src/orders/documents.js';
import type { OrderDocument } from '../../../src/orders/documents.js';
import { touches } from '../../support/interleavingStore.js';
import { flowStartMs, leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

// The drain's batches over the in-memory store: how many it writes, how it re-plans after a lost
// race or a marker found, and when it stops. Other writers come in exactly between read and write.
type Flow = ReturnType<typeof orderFlow>;

const stillParked = (t: Flow) => t.parked('o1').filter((p) => p.state === 'parked');
const drainCommits = (t: Flow) => t.store.commitLog.filter((c) => c.operations.some((op) => (op.document as { docType?: string }).docType === 'parked')).length;

/** Another writer changes the order (as a payment on the normal path would): the drain's etag is stale. */
async function orderChangedMeanwhile(t: Flow): Promise<void> {
  const order = await t.memory.read<OrderDocument>('o1', 'o1');
  const changed: OrderDocument = { ...order!.document, customerId: `${order!.document.customerId}+` };
  await t.memory.commit('o1', [replace(changed, order!.etag)]);
}

async function placed(t: Flow): Promise<void> {
  await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
  t.store.commitLog.length = 0;
  t.store.queries = 0;
}

describe('draining parked items in batches', () => {
  it('does nothing for an order that is not stored', async () => {
    const t = orderFlow();
    await leftParked(t, 'o1', 'p-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1' }));
    expect(await drainParkedItems('o1', t.ctx)).toEqual({ applied: 0, rejected: [] });
    expect([t.store.commitLog.length, stillParked(t)]).toEqual([0, [expect.objectContaining({ id: 'parked|payment|p-1' })]]);
  });

  it('writes nothing when nothing is parked: one look, no batch', async () => {
    const t = orderFlow();
    await placed(t);
    expect(await drainParkedItems('o1', t.ctx)).toEqual({ applied: 0, rejected: [] });
    expect([t.store.commitLog.length, t.store.queries]).toEqual([0, 1]);
  });

  it('splits what does not fit into one transactional batch: 100 operations (the order and 99 items), then the rest, then stops', async () => {
    const t = orderFlow();
    await placed(t);
    for (let version = 1; version <= 150; version += 1) await leftParked(t, 'o1', `s-${version}`, 'OrderStatusChanged', orderStatusChanged('o1', version));
    t.store.commitLog.length = 0;
    expect(await drainParkedItems('o1', t.ctx)).toEqual({ applied: 150, rejected: [] });
    expect(t.store.commitLog.map((c) => c.operations.length)).toEqual([100, 52]);
    expect(t.store.queries).toBe(2);
    expect(await t.order('o1')).toMatchObject({ statusVersion: 150 });
    expect(stillParked(t)).toEqual([]);
  });

  it('re-reads the order and plans again after losing it to another writer', async () => {
    const t = orderFlow();
    await placed(t);
    await leftParked(t, 'o1', 'p-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1', amount: 5 }));
    t.store.beforeCommit(touches('parked'), () => orderChangedMeanwhile(t));
    expect(await drainParkedItems('o1', t.ctx)).toEqual({ applied: 1, rejected: [] });
    expect(drainCommits(t)).toBe(2);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1, customerId: 'c-42+' });
  });

  it('gives up after ten rounds per concurrency attempt when every batch loses, the items left parked for the sweeper', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 1 });
    await placed(t);
    await leftParked(t, 'o1', 'p-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1', amount: 5 }));
    t.store.beforeCommit(touches('parked'), () => orderChangedMeanwhile(t), 1_000);
    expect(await drainParkedItems('o1', t.ctx)).toEqual({ applied: 0, rejected: [] });
    expect(drainCommits(t)).toBe(10);
    expect(stillParked(t)).toHaveLength(1);
    expect(await t.order('o1')).toMatchObject({ paymentCount: 0 });
  });

  it("marks the one payment whose copy was counted on the normal path meanwhile (its marker's 409), and applies the others", async () => {
    const t = orderFlow();
    await placed(t);
    const first = paymentReceived('o1', { paymentId: 'p-1', amount: 5 });
    const second = paymentReceived('o1', { paymentId: 'p-2', amount: 7 });
    await leftParked(t, 'o1', 'p-1', 'PaymentReceived', first, flowStartMs);
    const secondId = await leftParked(t, 'o1', 'p-2', 'PaymentReceived', second, flowStartMs + 1000);
    // The normal path counts p-2 and writes its marker, after the drain has planned it as new.
    t.store.beforeCommit(touches('parked'), async () => expect((await t.send('p-2', 'PaymentReceived', second)).outcome).toEqual({ kind: 'created' }));
    expect(await drainParkedItems('o1', t.ctx)).toEqual({ applied: 2, rejected: [] });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 12, paymentCount: 2 });
    expect(t.parked('o1').find((p) => p.id === secondId)).toMatchObject({ state: 'applied', appliedAs: 'payment' });
  });

  it('goes on when the marker behind a 409 is gone by the time it is read (its ttl ran out): the drain plans again, it does not fail', async () => {
    const t = orderFlow();
    await placed(t);
    const payment = paymentReceived('o1', { paymentId: 'p-1', amount: 5 });
    await leftParked(t, 'o1', 'p-1', 'PaymentReceived', payment);
    t.store.beforeCommit(touches('parked'), async () => void (await t.send('p-1', 'PaymentReceived', payment)));
    t.store.beforeRead(
      (_pk, id) => id === inboxMarkerId('p-1'),
      async () => void t.advance(3601),
    );
    const result = await drainParkedItems('o1', t.ctx);
    expect(result).toEqual({ applied: 1, rejected: [] });
    expect(stillParked(t)).toEqual([]);
  });
});
