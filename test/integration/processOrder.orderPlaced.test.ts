import { describe, expect, it } from 'vitest';
import { PermanentMessageError } from '../../src/idempotency/index.js';
import { rejectionDocumentId } from '../../src/orders/index.js';
import { documentsOf } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';
import { BrokerMessage, deliver, outcomeLine, useProcessOrder } from '../support/processOrderHarness.js';

const app = useProcessOrder();

const placed = (orderId: string, overrides: Record<string, unknown> = {}, messageId = `m-${orderId}`) =>
  new BrokerMessage({ body: orderPlaced(orderId, overrides), messageId, subject: 'OrderPlaced' });

describe('processOrder: OrderPlaced', () => {
  it('creates the order and its OrderAccepted outbox entry together', async () => {
    const orderId = newOrderId();
    const result = await deliver(app.fn, placed(orderId));
    expect(result.error).toBeUndefined();
    expect(outcomeLine(result)).toMatchObject({ outcome: 'created', orderId, type: 'OrderPlaced', dedupKey: `m-${orderId}`, deliveryCount: 1 });
    const docs = await documentsOf(app.container, orderId);
    expect(docs.map((d) => d.docType).sort()).toEqual(['order', 'outbox', 'parking-lot']);
    const order = docs.find((d) => d.docType === 'order');
    expect(order).toMatchObject({ id: orderId, messageId: `m-${orderId}`, dedupKey: `m-${orderId}`, total: 20.08, amountPaid: 0, status: 'Accepted' });
    expect(order?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(docs.find((d) => d.docType === 'outbox')).toMatchObject({
      eventType: 'OrderAccepted',
      state: 'pending',
      publishedAt: null,
      destination: 'order-events',
      message: { subject: 'OrderAccepted', sessionId: orderId, body: { orderId, total: 20.08 } },
    });
  });

  it('turns 50 concurrent deliveries of one message into one order and 49 duplicates', async () => {
    const orderId = newOrderId();
    const message = placed(orderId);
    const results = await Promise.all(Array.from({ length: 50 }, () => deliver(app.fn, message)));
    const outcomes = results.map((r) => outcomeLine(r).outcome);
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(49);
    expect(results.every((r) => r.error === undefined)).toBe(true);
    expect(await documentsOf(app.container, orderId)).toHaveLength(3);
  });

  it('absorbs a redelivery after a crash between the write and the completion', async () => {
    const orderId = newOrderId();
    const message = placed(orderId);
    await deliver(app.fn, message); // written, then the process dies before Service Bus hears "complete"
    const redelivery = await deliver(app.fn, message);
    expect(outcomeLine(redelivery)).toMatchObject({ outcome: 'duplicate', deliveryCount: 2 });
    expect(redelivery.error).toBeUndefined();
    expect(await documentsOf(app.container, orderId)).toHaveLength(3);
  });

  it('treats the same payload with other key order and white space as a duplicate', async () => {
    const orderId = newOrderId();
    const body = orderPlaced(orderId);
    await deliver(app.fn, new BrokerMessage({ body, messageId: `m-${orderId}`, subject: 'OrderPlaced' }));
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(body).reverse()), null, 2);
    const result = await deliver(app.fn, new BrokerMessage({ body: reordered, messageId: `m-${orderId}`, subject: 'OrderPlaced' }));
    expect(outcomeLine(result).outcome).toBe('duplicate');
  });

  describe('same key, different payload', () => {
    it('records a conflict, logs it at error level and refuses to complete the message', async () => {
      const orderId = newOrderId();
      await deliver(app.fn, placed(orderId));
      const conflicting = placed(orderId, { customerId: 'someone-else' });
      const result = await deliver(app.fn, conflicting);

      expect(result.error).toBeInstanceOf(PermanentMessageError);
      expect((result.error as PermanentMessageError).code).toBe('PayloadConflict');
      const errorLines = result.logs.filter((l) => l.level === 'error' && l.message.includes('"outcome":"conflict"'));
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]?.message).toContain(`"dedupKey":"m-${orderId}"`);

      const docs = await documentsOf(app.container, orderId);
      const order = docs.find((d) => d.docType === 'order');
      expect(order?.customerId).toBe('c-42');
      const conflicts = docs.filter((d) => d.docType === 'conflict');
      expect(conflicts).toHaveLength(1);
      expect(conflicts[0]).toMatchObject({
        dedupKey: `m-${orderId}`,
        incoming: { messageId: `m-${orderId}` },
        existing: { messageId: `m-${orderId}`, fingerprint: order?.fingerprint, documentId: orderId },
      });
      expect((conflicts[0]?.incoming as { fingerprint: string }).fingerprint).not.toBe(order?.fingerprint);
    });

    it('keeps one conflict record however often the conflicting message arrives, and says why by MessageId', async () => {
      const orderId = newOrderId();
      await deliver(app.fn, placed(orderId));
      const resends = [placed(orderId, { currency: 'USD' }), placed(orderId, { currency: 'USD' })];
      for (const message of resends) await deliver(app.fn, message);
      await deliver(app.fn, resends[1]!); // a redelivery of the second send

      const docs = await documentsOf(app.container, orderId);
      expect(docs.filter((d) => d.docType === 'conflict')).toHaveLength(1);
      // Beside the conflict document, in the order's partition, naming the newest broker message rejected.
      const { resource: rejection } = await app.container.item(rejectionDocumentId(`m-${orderId}`), orderId).read();
      expect(rejection).toMatchObject({
        reason: 'PayloadConflict',
        messageId: `m-${orderId}`,
        messageOrderId: orderId,
        sequenceNumber: resends[1]!.sequenceNumber,
      });
      expect(docs.filter((d) => d.docType === 'rejection')).toHaveLength(1);
      expect(rejection.description).toContain('differs from what is stored');
    });

    it('is a conflict too when another MessageId carries a different order under the same order id', async () => {
      const orderId = newOrderId();
      await deliver(app.fn, placed(orderId));
      const result = await deliver(app.fn, placed(orderId, { lines: [{ sku: 'X', quantity: 1, unitPrice: 1 }] }, 'another-message'));
      expect(outcomeLine(result).outcome).toBe('conflict');
    });

    it('is a duplicate when another MessageId carries the same order (a producer retry with a new id)', async () => {
      const orderId = newOrderId();
      await deliver(app.fn, placed(orderId));
      const result = await deliver(app.fn, placed(orderId, {}, 'retry-with-new-id'));
      expect(outcomeLine(result).outcome).toBe('duplicate');
    });
  });
});
