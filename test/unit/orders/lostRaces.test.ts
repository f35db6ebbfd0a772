import { describe, expect, it } from 'vitest';
import { create, replace } from '../../../src/idempotency/index.js';
import { drainParkedItems } from '../../../src/orders/applyParkedItems.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { inboxMarkerId, outboxDocumentId, rejectedMessagesPartition, rejectionDocumentId } from '../../../src/orders/index.js';
import { touches } from '../../support/interleavingStore.js';
import { leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

type Flow = ReturnType<typeof orderFlow>;

/** Another writer changes the order (its etag moves) and nothing else. */
async function touchOrder(t: Flow, orderId: string): Promise<void> {
  const current = await t.memory.read<OrderDocument>(orderId, orderId);
  if (!current) throw new Error(`order ${orderId} is not stored`);
  const result = await t.memory.commit(orderId, [replace({ ...current.document, touchedBy: 'another writer' } as OrderDocument, current.etag)]);
  expect(result.kind).toBe('committed');
}

/** How many commits the store is asked for, from now on, that write a document of this docType. */
function commitsOf(t: Flow, docType: string): () => number {
  const from = t.store.commitLog.length;
  return () => t.store.commitLog.slice(from).filter((c) => touches(docType)(c.partitionKey, c.operations)).length;
}

describe('a payment that loses the order to another writer', () => {
  it('reads the order again and counts itself once, within the same delivery', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    t.store.beforeCommit(touches('inbox'), () => t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid')));
    const paymentCommits = commitsOf(t, 'inbox');

    const result = await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));

    expect(result.outcome).toEqual({ kind: 'created' });
    expect(paymentCommits()).toBe(2);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1, status: 'Paid', statusVersion: 2 });
    expect(t.memory.list('o1').filter((d) => d.id === inboxMarkerId('pay-1'))).toHaveLength(1);
  });

  it('hands the message back as a retry after maxConcurrencyAttempts lost races in a row, having counted nothing', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 3 });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    t.store.beforeCommit(touches('inbox'), () => touchOrder(t, 'o1'), Infinity);
    const paymentCommits = commitsOf(t, 'inbox');

    const result = await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));

    expect(result.outcome).toEqual({ kind: 'retry', reason: 'order o1 changed under 3 attempts in a row' });
    expect(paymentCommits()).toBe(3);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
    expect(t.memory.list('o1').filter((d) => d.id === inboxMarkerId('pay-1'))).toEqual([]);
  });

  it('is retried, not taken for a duplicate, when its marker was there at the write and gone at the read (its ttl ran out in between)', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    t.store.beforeRead(
      (_pk, id) => id === inboxMarkerId('pay-1'),
      () => Promise.resolve(t.advance(3601)),
    );

    // Sent again by its producer: a first delivery, which writes first (a redelivery would read its marker first).
    const again = await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));

    expect(again.outcome).toEqual({ kind: 'retry', reason: `${inboxMarkerId('pay-1')} was reported to exist but could not be read` });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('is rejected as CurrencyMismatch with its rejection recorded, never counted', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));

    const result = await t.send('pay-usd', 'PaymentReceived', paymentReceived('o1', { amount: 5, currency: 'USD' }));

    expect(result.outcome).toMatchObject({ kind: 'invalid', error: { code: 'CurrencyMismatch' } });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
    const rejection = await t.memory.read(rejectedMessagesPartition('pay-usd'), rejectionDocumentId('pay-usd'));
    expect(rejection?.document).toMatchObject({ reason: 'CurrencyMismatch', messageId: 'pay-usd', messageOrderId: 'o1', dedupKey: 'pay-usd' });
  });
});

describe('a status change that loses the order to another writer', () => {
  it('reports stale, not created, when the writer in between stored a newer version', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    t.store.beforeCommit(
      (_pk, ops) => ops.some((op) => (op.document as OrderDocument).statusVersion === 2),
      () => t.send('st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped')),
    );

    const result = await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'));

    expect(result.outcome).toEqual({ kind: 'stale', storedVersion: 3 });
    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 3, statusMessageId: 'st-3' });
  });

  it('applies itself on the next read when the writer in between stored an older version', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    t.store.beforeCommit(
      (_pk, ops) => ops.some((op) => (op.document as OrderDocument).statusVersion === 3),
      () => t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid')),
    );
    const statusCommits = commitsOf(t, 'order');

    const result = await t.send('st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped'));

    expect(result.outcome).toEqual({ kind: 'created' });
    expect(statusCommits()).toBe(3); // its own lost write, the older version's write, its own again
    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 3, statusMessageId: 'st-3' });
  });

  it('hands the message back as a retry after maxConcurrencyAttempts lost races in a row, leaving the status as it was', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 2 });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    t.store.beforeCommit(
      (_pk, ops) => ops.some((op) => (op.document as OrderDocument).statusVersion === 2),
      () => touchOrder(t, 'o1'),
      Infinity,
    );

    const result = await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'));

    expect(result.outcome).toEqual({ kind: 'retry', reason: 'order o1 changed under 2 attempts in a row' });
    expect(await t.order('o1')).toMatchObject({ status: 'Accepted', statusVersion: 0 });
  });
});

describe('an OrderPlaced that meets what it did not write', () => {
  it("is handed back, not completed as a duplicate, when the order's outbox entry exists without the order (deleted by hand)", async () => {
    const t = orderFlow();
    await t.memory.commit('o1', [create({ id: outboxDocumentId('o1'), orderId: 'o1', docType: 'outbox', state: 'pending' } as never)]);

    const result = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));

    expect(result.outcome).toEqual({ kind: 'retry', reason: 'order o1: unexpected already-exists on batch operation 1' });
    expect(await t.order('o1')).toBeUndefined();
  });
});

describe('an invalid message whose rejection cannot be recorded', () => {
  it('is retried, never completed, so the reason is not lost', async () => {
    const t = orderFlow();
    t.store.beforeCommit(touches('rejection'), () => Promise.reject(new Error('store unavailable')));

    const result = await t.send('bad-1', 'PaymentReceived', { orderId: 'o1' });

    expect(result.outcome).toMatchObject({ kind: 'retry', reason: 'could not record rejection: Error: store unavailable' });
    expect(await t.memory.read(rejectedMessagesPartition('bad-1'), rejectionDocumentId('bad-1'))).toBeUndefined();
  });
});

describe('the pause after a lost race', () => {
  it('goes through the injected sleeper, up to 4 ms of jitter per attempt, so no real timer stands between two writers', async () => {
    const pauses: number[] = [];
    const t = orderFlow({ maxConcurrencyAttempts: 3, sleep: (ms) => (pauses.push(ms), Promise.resolve()), random: () => 0.99 });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    t.store.beforeCommit(touches('inbox'), () => touchOrder(t, 'o1'), 3);
    expect((await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }))).outcome).toMatchObject({ kind: 'retry' });
    expect(pauses).toEqual([3, 7, 11]);
  });

  it('after a parked-item batch lost to another writer, grows by up to 4 ms per attempt and stops growing at the tenth', async () => {
    const pauses: number[] = [];
    const t = orderFlow({ maxConcurrencyAttempts: 2, sleep: (ms) => (pauses.push(ms), Promise.resolve()), random: () => 0.99 });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await leftParked(t, 'o1', 'pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    t.store.beforeCommit(touches('parked'), () => touchOrder(t, 'o1'), 11);
    expect(await drainParkedItems('o1', t.ctx)).toMatchObject({ applied: 1, rejected: [] });
    expect(pauses).toEqual([3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 39]);
  });
});
