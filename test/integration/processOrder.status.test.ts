import { describe, expect, it } from 'vitest';
import { orderStatusChanged } from '../support/orderMessages.js';
import { BrokerMessage, deliver, deliverUntilSettled, outcomeLine, placeOrder, useProcessOrder } from '../support/processOrderHarness.js';

const app = useProcessOrder();

const placedOrder = () => placeOrder(app.fn);

const statusChange = (orderId: string, version: number, status: string) =>
  new BrokerMessage({ body: orderStatusChanged(orderId, version, status), messageId: `s-${orderId}-${version}`, subject: 'OrderStatusChanged' });

async function statusOf(orderId: string) {
  const { resource } = await app.container.item(orderId, orderId).read();
  return resource as { status: string; statusVersion: number };
}

describe('processOrder: OrderStatusChanged', () => {
  it('applies versions that arrive out of order so that the newest wins, the rest counting as stale', async () => {
    const orderId = await placedOrder();
    const arrivals: [number, string][] = [[3, 'Shipped'], [1, 'Paid'], [5, 'Delivered'], [2, 'Paid'], [4, 'Shipped']];
    const outcomes = [];
    for (const [version, status] of arrivals) outcomes.push(outcomeLine(await deliver(app.fn, statusChange(orderId, version, status))).outcome);
    expect(outcomes).toEqual(['created', 'stale', 'created', 'stale', 'stale']);
    expect(await statusOf(orderId)).toMatchObject({ status: 'Delivered', statusVersion: 5 });
  });

  it('completes a redelivered status as stale with no change', async () => {
    const orderId = await placedOrder();
    const message = statusChange(orderId, 1, 'Paid');
    await deliver(app.fn, message);
    const redelivery = await deliver(app.fn, message);
    expect(outcomeLine(redelivery)).toMatchObject({ outcome: 'stale', reason: 'stored status version 1' });
    expect(redelivery.error).toBeUndefined();
  });

  it('ends on the highest version when ten versions race', async () => {
    const orderId = await placedOrder();
    const messages = Array.from({ length: 10 }, (_, i) => statusChange(orderId, i + 1, i === 9 ? 'Cancelled' : 'Shipped'));
    await Promise.all(messages.reverse().map((m) => deliverUntilSettled(app.fn, m)));
    expect(await statusOf(orderId)).toMatchObject({ status: 'Cancelled', statusVersion: 10 });
  });
});
