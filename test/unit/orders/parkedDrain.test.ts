import { describe, expect, it } from 'vitest';
import { fingerprintPayload } from '../../../src/idempotency/index.js';
import { sweepParkedItems } from '../../../src/orders/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

// What is still parked for a stored order (a crash between the order's batches leaves it so)
// meets what its own copy already did on the order's normal path: marked, never applied twice.
const sweepOptions = { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 100 };
type Flow = ReturnType<typeof orderFlow>;

const parkedItem = async (t: Flow, orderId: string, id: string) => (await t.memory.read<ParkedItemDocument>(orderId, id))?.document;

describe('draining what is still parked for a stored order', () => {
  it('marks a parked payment applied, without counting it again, when its copy was counted on the normal path', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const payment = paymentReceived('o1', { paymentId: 'p-1', amount: 5 });
    const id = await leftParked(t, 'o1', 'p-1', 'PaymentReceived', payment);
    expect((await t.send('p-1', 'PaymentReceived', payment)).outcome).toEqual({ kind: 'created' });
    t.advance(120);

    expect(await sweepParkedItems(t.ctx, sweepOptions)).toMatchObject({ applied: 1, rejected: [] });

    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(await parkedItem(t, 'o1', id)).toMatchObject({ state: 'applied', appliedAs: 'payment' });
  });

  it('rejects a parked payment as PayloadConflict when another payment was counted under its key', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const id = await leftParked(t, 'o1', 'p-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1', amount: 7 }));
    await t.send('p-1', 'PaymentReceived', paymentReceived('o1', { paymentId: 'p-1', amount: 5 }));
    t.advance(120);

    const result = await sweepParkedItems(t.ctx, sweepOptions);

    expect(result.applied).toBe(0);
    expect(result.rejected).toEqual([expect.objectContaining({ reason: 'PayloadConflict' })]);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(await parkedItem(t, 'o1', id)).toMatchObject({
      state: 'rejected',
      rejection: { reason: 'PayloadConflict', description: 'PaymentReceived p-1 for order o1 differs from the payment already applied under that key' },
    });
  });

  it('rejects a parked status change that contradicts the stored one at the same version, naming both', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await t.send('st-2a', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'));
    const contradicting = orderStatusChanged('o1', 2, 'Cancelled');
    const id = await leftParked(t, 'o1', 'st-2b', 'OrderStatusChanged', contradicting);
    t.advance(120);

    const result = await sweepParkedItems(t.ctx, sweepOptions);

    expect(result.rejected).toEqual([expect.objectContaining({ reason: 'PayloadConflict' })]);
    expect(await t.order('o1')).toMatchObject({ status: 'Paid', statusVersion: 2 });
    const stored = await t.order('o1');
    expect((await parkedItem(t, 'o1', id))?.rejection?.description).toBe(
      `OrderStatusChanged version 2 for order o1 differs from the stored one (message st-2a, fingerprint ${stored?.statusFingerprint}; this one ${fingerprintPayload('OrderStatusChanged', contradicting)})`,
    );
  });

  it('applies a parked status change that repeats the stored one as stale, and a newer one as the status', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const paid = orderStatusChanged('o1', 2, 'Paid');
    await t.send('st-2', 'OrderStatusChanged', paid);
    const repeat = await leftParked(t, 'o1', 'st-2', 'OrderStatusChanged', paid);
    const newer = await leftParked(t, 'o1', 'st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped'));
    t.advance(120);

    expect(await sweepParkedItems(t.ctx, sweepOptions)).toMatchObject({ applied: 2, rejected: [] });

    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 3, statusMessageId: 'st-3' });
    expect(await parkedItem(t, 'o1', repeat)).toMatchObject({ state: 'applied', appliedAs: 'stale' });
    expect(await parkedItem(t, 'o1', newer)).toMatchObject({ state: 'applied', appliedAs: 'status' });
  });
});
