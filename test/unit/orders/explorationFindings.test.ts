import { describe, expect, it } from 'vitest';
import { rejectedMessagesPartition, rejectionDocumentId, sweepParkedItems } from '../../../src/orders/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { flowStartMs, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// Two defects the exploration suite (test/explore) found, each set up here as a fixed schedule.
describe('found by exploring the order flows', () => {
  it('a conflicting payload re-sent under another MessageId has its own rejection record, also on a redelivery', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const good = paymentReceived('o1', { paymentId: 'p-1', amount: 5 });
    await t.send('p-good', 'PaymentReceived', good, 1, { 'idempotency-key': 'pay-K' });
    const wrong = { ...good, amount: 7 };
    expect((await t.send('p-wrong-b', 'PaymentReceived', wrong, 1, { 'idempotency-key': 'pay-K' })).outcome).toMatchObject({ kind: 'conflict' });
    expect((await t.send('p-wrong-a', 'PaymentReceived', wrong, 2, { 'idempotency-key': 'pay-K' })).outcome).toMatchObject({ kind: 'conflict' });
    const recorded = (messageId: string) =>
      [...t.memory.list('o1'), ...t.memory.list(rejectedMessagesPartition(messageId))].some((d) => d.id === rejectionDocumentId(messageId));
    expect([recorded('p-wrong-b'), recorded('p-wrong-a')]).toEqual([true, true]);
  });

  it('a rejected parked item handed back to its order keeps its rejection, so a delivery that dies right after leaves the reason', async () => {
    const t = orderFlow({ markerTtlSeconds: 40 * 86_400 });
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1', amount: 5 }));
    t.advance(15 * 86_400);
    expect((await sweepParkedItems(t.ctx, { horizonSeconds: 14 * 86_400, minAgeSeconds: 0, maxItemsPerRun: 100 })).rejected).toHaveLength(1);
    // A copy of pay-1 reads "no order"; its order is stored while it claims the payment; it re-parks,
    // finds the gate closed, hands the rejected item back to the order, and dies before applying it.
    t.store.beforeCommit(
      (pk) => pk.startsWith('#payment'),
      async () => expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created' }),
    );
    let handedBack = false;
    t.store.beforeCommit(
      (_pk, ops) => ops.some((op) => (op.document as ParkedItemDocument).state === 'resubmitted'),
      async () => void (handedBack = true),
    );
    t.store.beforeRead(
      (_pk, id) => handedBack && id === 'o1',
      () => Promise.reject(new Error('the process died')),
      1,
    );
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1', amount: 5 }), 2).catch(() => undefined);
    const item = t.parked('o1').find((p) => p.messageId === 'pay-1');
    expect(handedBack).toBe(true);
    expect(item?.rejection?.reason).toBe('OrderNeverArrived');
    // Rejected as parked too long, it still says when it was parked (the exploration found it re-dated).
    expect(item?.parkedAt).toBe(new Date(flowStartMs).toISOString());
  });
});
