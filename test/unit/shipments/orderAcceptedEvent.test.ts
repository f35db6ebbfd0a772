import { describe, expect, it } from 'vitest';
import { newOrderAcceptedOutbox, newOrderDocument } from '../../../src/orders/documents.js';
import type { OrderPlaced } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { parseShipmentEvent } from '../../../src/shipments/index.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { permanentFailureOf } from '../../support/permanentFailure.js';

const order = newOrderDocument(orderPlaced('o-7') as OrderPlaced, {
  messageId: 'placed-o-7',
  dedupKey: 'placed-o-7',
  fingerprint: 'f',
  processedAt: '2026-12-01T10:00:00.000Z',
});
const { message } = newOrderAcceptedOutbox(order, 'order-events');
const envelope = (overrides: Record<string, unknown> = {}) =>
  envelopeFromTriggerMetadata({ messageId: message.messageId, subject: message.subject, applicationProperties: message.applicationProperties, ...overrides });

const refusal = permanentFailureOf;

describe('parseShipmentEvent', () => {
  it("keys the booking by the event's CloudEvents source and id, and asks the carrier for the order", () => {
    const event = parseShipmentEvent(envelope(), message.body, 1 << 20);
    expect(event).toMatchObject({
      key: '/idempotent-order-consumer/orders|outbox%7COrderAccepted%7Co-7',
      messageId: 'outbox|OrderAccepted|o-7',
      orderId: 'o-7',
      request: { orderReference: 'o-7', customerId: 'c-42', declaredValue: order.total, currency: 'EUR' },
    });
    expect(event.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('every copy of one event has one key: a delayed copy or a resubmit under another MessageId, the key pinned', () => {
    const original = parseShipmentEvent(envelope(), message.body, 1 << 20);
    const copy = parseShipmentEvent(envelope({ messageId: `${message.messageId}~retry-1` }), message.body, 1 << 20);
    expect(copy.key).toBe(original.key);
    const pinned = parseShipmentEvent(
      envelope({ messageId: 'x~resubmit-1', applicationProperties: { 'idempotency-key': original.key } }),
      message.body,
      1 << 20,
    );
    expect(pinned.key).toBe(original.key);
    const numeric = parseShipmentEvent(envelope({ messageId: 'y', applicationProperties: { 'idempotency-key': 42 } }), message.body, 1 << 20);
    expect(numeric.key).toBe('42');
  });

  it('the fingerprint changes with what the carrier is asked, and only with that', () => {
    const a = parseShipmentEvent(envelope(), message.body, 1 << 20);
    const b = parseShipmentEvent(envelope(), { ...(message.body as object), total: 1 }, 1 << 20);
    const c = parseShipmentEvent(envelope(), { ...(message.body as object), placedAt: '2026-12-02T00:00:00Z' }, 1 << 20);
    expect(b.fingerprint).not.toBe(a.fingerprint);
    expect(c.fingerprint).toBe(a.fingerprint);
  });

  it('refuses another event type, a body that breaks the schema, and an event with no key, each by name', () => {
    expect(refusal(() => parseShipmentEvent(envelope({ subject: 'OrderPlaced' }), message.body, 1 << 20))).toMatchObject({
      code: 'UnknownMessageType',
      description: expect.stringContaining('"OrderPlaced" is not OrderAccepted'),
    });
    const schema = refusal(() => parseShipmentEvent(envelope(), { ...(message.body as object), total: -1, orderId: ' o-7' }, 1 << 20));
    expect(schema).toMatchObject({ code: 'SchemaViolation', dedupKey: expect.any(String) });
    expect(schema.description).toMatch(/total/);
    expect(schema.description).toMatch(/orderId/);
    expect(refusal(() => parseShipmentEvent(envelopeFromTriggerMetadata({ subject: 'OrderAccepted' }), message.body, 1 << 20))).toMatchObject({
      code: 'NoDedupKey',
    });
    expect(refusal(() => parseShipmentEvent(envelope(), '{not json', 1 << 20))).toMatchObject({ code: 'InvalidJson' });
  });

  it('takes a three-letter currency only, and a time with its offset', () => {
    const body = message.body as Record<string, unknown>;
    for (const currency of ['EU', 'EURO'])
      expect(refusal(() => parseShipmentEvent(envelope(), { ...body, currency }, 1 << 20)).description, currency).toContain('currency');
    expect(parseShipmentEvent(envelope(), { ...body, placedAt: '2026-11-30T08:00:00+02:00' }, 1 << 20).orderId).toBe('o-7');
    expect(refusal(() => parseShipmentEvent(envelope(), { ...body, placedAt: '2026-11-30T08:00:00' }, 1 << 20)).description).toContain('placedAt');
  });

  it('takes its type from a CloudEvents type when there is no subject, and names a missing one', () => {
    const props = { ...message.applicationProperties, 'cloudEvents:type': 'com.shop.OrderAccepted' };
    expect(parseShipmentEvent(envelopeFromTriggerMetadata({ messageId: message.messageId, applicationProperties: props }), message.body, 1 << 20).orderId).toBe(
      'o-7',
    );
    const { 'cloudEvents:type': _type, ...untyped } = message.applicationProperties;
    expect(
      refusal(() => parseShipmentEvent(envelopeFromTriggerMetadata({ messageId: message.messageId, applicationProperties: untyped }), message.body, 1 << 20)),
    ).toMatchObject({
      code: 'UnknownMessageType',
      description: 'type null is not OrderAccepted, the one event requestShipment handles',
    });
  });

  it('says which keys it looked for when the event has none', () => {
    expect(refusal(() => parseShipmentEvent(envelopeFromTriggerMetadata({ subject: 'OrderAccepted' }), message.body, 1 << 20)).description).toBe(
      'the event has no idempotency-key property, CloudEvents source and id, or MessageId',
    );
  });
});
