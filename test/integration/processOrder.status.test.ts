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
    const arrivals: [number, string][] = [
      [3, 'Shipped'],
      [1, 'Paid'],
      [5, 'Delivered'],
      [2, 'Paid'],
      [4, 'Shipped'],
    ];
    const outcomes = [];
    for (const [version, status] of arrivals) outcomes.push(outcomeLine(await deliver(app.fn, statusChange(orderId, version, status))).outcome);
    expect(outcomes).toEqual(['created', 'stale', 'created', 'stale', 'stale']);
    expect(await statusOf(orderId)).toMatchObject({ status: 'Delivered', statusVersion: 5 });
  });

  it('completes a redelivered status as a duplicate with no change', async () => {
    const orderId = await placedOrder();
    const message = statusChange(orderId, 1, 'Paid');
    await deliver(app.fn, message);
    const redelivery = await deliver(app.fn, message);
    expect(outcomeLine(redelivery)).toMatchObject({ outcome: 'duplicate' });
    expect(redelivery.error).toBeUndefined();
  });

  it('treats another status at the stored version as a conflict: recorded, thrown, the status unchanged', async () => {
    const orderId = await placedOrder();
    await deliver(app.fn, statusChange(orderId, 2, 'Shipped'));
    const other = new BrokerMessage({ body: orderStatusChanged(orderId, 2, 'Cancelled'), messageId: `other-${orderId}`, subject: 'OrderStatusChanged' });
    const result = await deliver(app.fn, other);
    expect(outcomeLine(result)).toMatchObject({ outcome: 'conflict', reason: expect.stringContaining('PayloadConflict: OrderStatusChanged for order') });
    expect(result.error).toBeDefined();
    expect(await statusOf(orderId)).toMatchObject({ status: 'Shipped', statusVersion: 2 });
    const conflicts = (
      await app.container.items
        .query({ query: 'SELECT * FROM c WHERE c.orderId = @o AND c.docType = "conflict"', parameters: [{ name: '@o', value: orderId }] })
        .fetchAll()
    ).resources;
    expect(conflicts).toEqual([
      expect.objectContaining({
        messageType: 'OrderStatusChanged',
        incoming: expect.objectContaining({ messageId: `other-${orderId}` }),
        existing: expect.objectContaining({ messageId: `s-${orderId}-2`, documentId: orderId }),
      }),
    ]);
  });

  it('keeps an older version stale even when its status differs', async () => {
    const orderId = await placedOrder();
    await deliver(app.fn, statusChange(orderId, 3, 'Shipped'));
    expect(outcomeLine(await deliver(app.fn, statusChange(orderId, 2, 'Cancelled')))).toMatchObject({ outcome: 'stale', reason: 'stored status version 3' });
  });

  it('ends on the highest version when ten versions race', async () => {
    const orderId = await placedOrder();
    const messages = Array.from({ length: 10 }, (_, i) => statusChange(orderId, i + 1, i === 9 ? 'Cancelled' : 'Shipped'));
    await Promise.all(messages.reverse().map((m) => deliverUntilSettled(app.fn, m)));
    expect(await statusOf(orderId)).toMatchObject({ status: 'Cancelled', statusVersion: 10 });
  });
});
