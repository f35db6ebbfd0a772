import { describe, expect, it } from 'vitest';
import { newOrderAcceptedOutbox, newOrderDocument } from '../../../src/orders/documents.js';
import { maxMessageIdLength, messageIdNamingBody, newOutboxDocument } from '../../../src/outbox/index.js';
import { orderPlaced } from '../../support/orderMessages.js';

const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const event = {
  id: 'outbox|OrderPlaced|o-1',
  orderId: 'o-1',
  eventType: 'OrderPlaced',
  destination: 'orders',
  body: { a: 1 },
  createdAt: '2026-12-01T10:00:00Z',
};

describe("an outbox entry's message", () => {
  it("is JSON, and carries its writer's trace context as Diagnostic-Id, the property the SDKs and the host read", () => {
    const entry = newOutboxDocument({ ...event, traceparent });
    expect(entry.message.contentType).toBe('application/json');
    expect(entry.message.applicationProperties).toMatchObject({ 'Diagnostic-Id': traceparent });
    expect(newOutboxDocument(event).message.applicationProperties).not.toHaveProperty('Diagnostic-Id');
  });

  it('for OrderAccepted, carries the trace context of the delivery that stored the order, and none without one', () => {
    const order = newOrderDocument(orderPlaced('o-1'), { messageId: 'm-1', dedupKey: 'm-1', fingerprint: 'f', processedAt: '2026-12-01T10:00:00Z' });
    expect(newOrderAcceptedOutbox(order, 'order-events', traceparent).message.applicationProperties).toMatchObject({ 'Diagnostic-Id': traceparent });
    const without = newOrderAcceptedOutbox(order, 'order-events');
    expect(without.message.applicationProperties).not.toHaveProperty('Diagnostic-Id');
    expect(without).not.toHaveProperty('traceparent');
  });
});

describe('a MessageId that names its body', () => {
  it('is the same for the same body, however its keys are ordered, and another for another body', () => {
    const body = orderPlaced('o-1');
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(messageIdNamingBody('o-1', 'OrderPlaced', reordered)).toBe(messageIdNamingBody('o-1', 'OrderPlaced', body));
    expect(messageIdNamingBody('o-1', 'OrderPlaced', orderPlaced('o-1', { customerId: 'c-43' }))).not.toBe(messageIdNamingBody('o-1', 'OrderPlaced', body));
    expect(messageIdNamingBody('o-1', 'OrderPlaced', body)).toMatch(/^o-1~[0-9a-f]{32}$/);
  });

  it('differs by event type and by base', () => {
    const body = { a: 1 };
    expect(messageIdNamingBody('o-1', 'OrderPlaced', body)).not.toBe(messageIdNamingBody('o-1', 'OrderAccepted', body));
    expect(messageIdNamingBody('o-1', 'OrderPlaced', body).slice(-32)).toBe(messageIdNamingBody('o-2', 'OrderPlaced', body).slice(-32));
  });

  it('stays within the 128 characters Service Bus takes, for the longest base, still naming the body', () => {
    const base = 'o'.repeat(400);
    const one = messageIdNamingBody(base, 'OrderPlaced', { a: 1 });
    expect(one.length).toBeLessThanOrEqual(maxMessageIdLength);
    expect(one).toMatch(/^~sha256:[0-9a-f]{64}~[0-9a-f]{32}$/);
    expect(messageIdNamingBody(base, 'OrderPlaced', { a: 2 })).not.toBe(one);
    expect(messageIdNamingBody(`${base}x`, 'OrderPlaced', { a: 1 })).not.toBe(one);
  });
});
