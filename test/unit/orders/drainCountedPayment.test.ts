import { describe, expect, it } from 'vitest';
import { replace } from '../../../src/idempotency/index.js';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import { sweepParkedItems } from '../../../src/orders/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { maxExactAmount } from '../../../src/orders/money.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// A parked payment left for the drain (its order's batch was full) is counted meanwhile on the
// order's normal path, by its own redelivery, and that effect is what takes the order to the
// exact-sum bound. The drain must find the effect before it judges the amount: a duplicate, marked
// applied, never refused AmountOutOfRange (a rejection an operator is asked to act on, for a payment
// that was counted).
type Flow = ReturnType<typeof orderFlow>;
const writes = (id: string) => (_pk: string, operations: readonly WriteOperation[]) => operations.some((op) => op.document.id === id);
const payment = paymentReceived('o1', { paymentId: 'P-1', amount: 5 });

/** The order's amountPaid set by hand this far below the exact-sum bound (short for some 90,000 payments). */
async function paidUpTo(t: Flow, roomLeft: number): Promise<void> {
  const stored = await t.memory.read<OrderDocument>('o1', 'o1');
  await t.memory.commit('o1', [replace({ ...stored!.document, amountPaid: maxExactAmount - roomLeft } as OrderDocument, stored!.etag)]);
}

/** 48 payments of 1 parked first fill the order's batch (two operations each); pay-1, parked after them, is left to the drain. */
async function parkedBehindAFullBatch(t: Flow): Promise<void> {
  for (let i = 1; i <= 48; i += 1)
    expect((await t.send(`x-${i}`, 'PaymentReceived', paymentReceived('o1', { paymentId: `X-${i}`, amount: 1 }))).outcome.kind).toBe('parked');
  t.advance(1);
  expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('parked');
}

describe('a parked payment counted on its order’s normal path before the drain reaches it, filling the order to the exact-sum bound', () => {
  it('the drain right after the order’s batch marks it applied, a duplicate, not rejected AmountOutOfRange', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    await parkedBehindAFullBatch(t);
    // Just before the drain's batch: the order is 5 short of the bound, and pay-1's redelivery counts it.
    t.store.beforeCommit(writes('parked|payment|pay-1'), async () => {
      await paidUpTo(t, 5);
      expect((await t.send('pay-1', 'PaymentReceived', payment, 2)).outcome.kind).toBe('created');
    });
    const placed = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(placed.outcome).toMatchObject({ kind: 'created', rejectedParked: [] });
    expect(t.parked('o1').find((i) => i.dedupKey === 'pay-1')).toMatchObject({ state: 'applied', appliedAs: 'payment' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount, paymentCount: 49 });
  });

  it('the sweeper, after the drain died, marks it applied too', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    await parkedBehindAFullBatch(t);
    // The drain's batch never reaches the store (its process dies); pay-1's redelivery counts it on a full order.
    t.store.beforeCommit(writes('parked|payment|pay-1'), async () => {
      await paidUpTo(t, 5);
      expect((await t.send('pay-1', 'PaymentReceived', payment, 2)).outcome.kind).toBe('created');
      throw new Error('the process dies before the drain’s batch');
    });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('retry');
    t.advance(120);
    const swept = await sweepParkedItems(t.ctx, { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 100 });
    expect(swept).toMatchObject({ applied: 1, rejected: [] });
    expect(t.parked('o1').find((i) => i.dedupKey === 'pay-1')).toMatchObject({ state: 'applied', appliedAs: 'payment' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount, paymentCount: 49 });
  });

  it('a parked payment that does not fit and was never counted is still rejected AmountOutOfRange', async () => {
    const t = orderFlow({ sleep: async () => undefined });
    await parkedBehindAFullBatch(t);
    t.store.beforeCommit(writes('parked|payment|pay-1'), () => paidUpTo(t, 4));
    const placed = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(placed.outcome).toMatchObject({ kind: 'created', rejectedParked: [expect.objectContaining({ dedupKey: 'pay-1', reason: 'AmountOutOfRange' })] });
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount - 4, paymentCount: 48 });
  });
});
