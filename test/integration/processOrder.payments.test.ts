import { describe, expect, it } from 'vitest';
import { documentsOf } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { BrokerMessage, deliver, deliverUntilSettled, outcomeLine, placeOrder, useProcessOrder } from '../support/processOrderHarness.js';

const app = useProcessOrder();

const placedOrder = () => placeOrder(app.fn);

const payment = (orderId: string, messageId: string, overrides: Record<string, unknown> = {}) =>
  new BrokerMessage({ body: paymentReceived(orderId, { paymentId: messageId, ...overrides }), messageId, subject: 'PaymentReceived' });

async function orderOf(orderId: string) {
  const { resource } = await app.container.item(orderId, orderId).read();
  return resource as { amountPaid: number; paymentCount: number };
}

describe('processOrder: PaymentReceived', () => {
  it('adds the amount once and leaves an inbox marker with a ttl', async () => {
    const orderId = await placedOrder();
    const result = await deliver(app.fn, payment(orderId, 'pay-1'));
    expect(outcomeLine(result).outcome).toBe('created');
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 10.04, paymentCount: 1 });
    const markers = (await documentsOf(app.container, orderId)).filter((d) => d.docType === 'inbox');
    expect(markers).toEqual([expect.objectContaining({ id: 'inbox|pay-1', dedupKey: 'pay-1', messageType: 'PaymentReceived', ttl: 30 * 24 * 3600 })]);
  });

  it('counts the amount once across 50 concurrent deliveries of one message', async () => {
    const orderId = await placedOrder();
    const message = payment(orderId, `pay-${orderId}`);
    const results = await Promise.all(Array.from({ length: 50 }, () => deliver(app.fn, message)));
    const outcomes = results.map((r) => outcomeLine(r).outcome);
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(49);
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 10.04, paymentCount: 1 });
  });

  it('counts every one of 20 different payments racing for one order, exactly once each', async () => {
    const orderId = await placedOrder();
    const messages = Array.from({ length: 20 }, (_, i) => payment(orderId, `race-${i}`, { amount: 0.1 }));
    // Lost races are retried in the flow and, past its attempts, redelivered like Service Bus would.
    await Promise.all(messages.map((m) => deliverUntilSettled(app.fn, m)));
    await Promise.all(messages.map((m) => deliver(app.fn, m))); // and each is redelivered once more
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 2, paymentCount: 20 });
  });

  it('absorbs a redelivery after a crash between the write and the completion', async () => {
    const orderId = await placedOrder();
    const message = payment(orderId, `crash-${orderId}`);
    await deliver(app.fn, message);
    const redelivery = await deliver(app.fn, message);
    expect(outcomeLine(redelivery)).toMatchObject({ outcome: 'duplicate', deliveryCount: 2 });
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 10.04 });
  });

  it('parks a payment whose order is not stored yet, completes it, and applies it once the order comes', async () => {
    const orderId = newOrderId();
    const early = payment(orderId, `early-${orderId}`);
    const first = await deliver(app.fn, early);
    expect(first.error).toBeUndefined();
    expect(outcomeLine(first)).toMatchObject({ outcome: 'parked', reason: expect.stringContaining(`parked as parked|payment|early-${orderId}`) });
    expect((await documentsOf(app.container, orderId)).map((d) => [d.docType, d.state]).sort()).toEqual([
      ['parked', 'parked'],
      ['parking-lot', 'open'],
    ]);

    const placed = await deliver(app.fn, new BrokerMessage({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' }));
    expect(outcomeLine(placed)).toMatchObject({ outcome: 'created', reason: 'with 1 parked item(s) applied, 0 rejected' });
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 10.04, paymentCount: 1 });
    expect(outcomeLine(await deliver(app.fn, early)).outcome).toBe('duplicate');
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 10.04, paymentCount: 1 });
  });

  it('sends a payment with the same key and another amount down the conflict path, counting nothing', async () => {
    const orderId = await placedOrder();
    await deliver(app.fn, payment(orderId, `p-${orderId}`, { amount: 5 }));
    const result = await deliver(app.fn, payment(orderId, `p-${orderId}`, { amount: 50 }));
    expect(outcomeLine(result).outcome).toBe('conflict');
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    const conflicts = (await documentsOf(app.container, orderId)).filter((d) => d.docType === 'conflict');
    expect(conflicts).toHaveLength(1);
    // The paymentId's claim, not the inbox marker, is what the other amount meets first.
    expect(conflicts[0]).toMatchObject({ messageType: 'PaymentReceived', existing: { documentId: `payment|p-${orderId}` } });
  });

  it('rejects a payment in another currency than the order as invalid', async () => {
    const orderId = await placedOrder();
    const result = await deliver(app.fn, payment(orderId, `usd-${orderId}`, { currency: 'USD' }));
    expect(outcomeLine(result)).toMatchObject({ outcome: 'invalid' });
    expect(String(outcomeLine(result).reason)).toContain('CurrencyMismatch');
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 0 });
  });

  it('sums amounts exactly in decimal (0.1 + 0.2 is 0.3)', async () => {
    const orderId = await placedOrder();
    await deliver(app.fn, payment(orderId, `a-${orderId}`, { amount: 0.1 }));
    await deliver(app.fn, payment(orderId, `b-${orderId}`, { amount: 0.2 }));
    expect((await orderOf(orderId)).amountPaid).toBe(0.3);
  });
});
