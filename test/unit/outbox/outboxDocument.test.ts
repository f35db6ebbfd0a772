import { describe, expect, it } from 'vitest';
import { newOrderAcceptedOutbox, newOrderDocument } from '../../../src/orders/documents.js';
import { newOutboxDocument } from '../../../src/outbox/index.js';
import { orderPlaced } from '../../support/orderMessages.js';

const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const event = { id: 'outbox|OrderPlaced|o-1', orderId: 'o-1', eventType: 'OrderPlaced', destination: 'orders', body: { a: 1 }, createdAt: '2026-12-01T10:00:00Z' };

describe('an outbox entry\'s message', () => {
  it('is JSON, and carries its writer\'s trace context as Diagnostic-Id, the property the SDKs and the host read', () => {
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
