import { describe, expect, it } from 'vitest';
import { findRejectionRecord } from '../../../src/consumer/index.js';
import { replace } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { maxExactAmount } from '../../../src/orders/money.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// Found by the exploration (order-flows/payment-claims, seed 31, run 89): a payment counted takes
// its order to the exact-sum bound, and a copy of it under another key, going on as the claimer,
// meets the full order before anything asks whether the payment is already counted.
type Flow = ReturnType<typeof orderFlow>;
const payment = paymentReceived('o1', { paymentId: 'P-1', amount: 5 });

async function placedWithRoom(t: Flow, roomLeft: number): Promise<void> {
  expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
  const stored = await t.memory.read<OrderDocument>('o1', 'o1');
  await t.memory.commit('o1', [replace({ ...stored!.document, amountPaid: maxExactAmount - roomLeft } as OrderDocument, stored!.etag)]);
}

describe('a copy of a payment whose own effect filled its order to the exact-sum bound', () => {
  it('under another key: a duplicate on every delivery, not refused as AmountOutOfRange (and dead-lettered though counted)', async () => {
    const t = orderFlow();
    await placedWithRoom(t, 5);
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount, paymentCount: 1 });
    for (const deliveryCount of [1, 2, 10]) expect((await t.send('pay-1-resent', 'PaymentReceived', payment, deliveryCount)).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount, paymentCount: 1 });
  });

  it('under the same key, a new MessageId: a duplicate on its first delivery, with no rejection recorded', async () => {
    const t = orderFlow();
    await placedWithRoom(t, 5);
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('created');
    const copy = await t.send('pay-1-copy', 'PaymentReceived', payment, 1, { 'idempotency-key': 'pay-1' });
    expect(copy.outcome.kind).toBe('duplicate');
    expect(await findRejectionRecord(t.memory, 'pay-1-copy', 'o1')).toBeUndefined();
  });

  it('a payment that does not fit, and is no copy, is still refused as AmountOutOfRange', async () => {
    const t = orderFlow();
    await placedWithRoom(t, 5);
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('created');
    const other = await t.send('pay-2', 'PaymentReceived', paymentReceived('o1', { paymentId: 'P-2', amount: 1 }));
    expect(other.outcome).toMatchObject({ kind: 'invalid', error: { code: 'AmountOutOfRange' } });
  });
});
