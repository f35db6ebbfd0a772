import { describe, expect, it } from 'vitest';
import { parseOrderMessage } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { parseShipmentEvent } from '../../../src/shipments/orderAcceptedEvent.js';
import { permanentFailureOf } from '../../support/permanentFailure.js';
import { paymentReceived } from '../../support/orderMessages.js';

// Keys a sender can make ambiguous: two spellings of one property (whichever came first used to
// win), and control characters that the operator tool would print raw.
const options = { maxMessageBytes: 262_144 };
const parse = (meta: Record<string, unknown>) => () =>
  parseOrderMessage(envelopeFromTriggerMetadata({ subject: 'PaymentReceived', ...meta }), paymentReceived('o-1'), options);

describe('two application properties whose names differ only by case', () => {
  it('are refused as AmbiguousProperty, naming both', () => {
    // What reaches the handler: the host lower-cases the first letter, so `Idempotency-Key` arrives as `idempotency-Key`.
    const error = permanentFailureOf(parse({ messageId: 'm-1', applicationProperties: { 'idempotency-key': 'k-1', 'idempotency-Key': 'k-2' } }));
    expect(error.code).toBe('AmbiguousProperty');
    expect(error.description).toContain('"idempotency-key"');
    expect(error.description).toContain('"idempotency-Key"');
  });

  it('are refused whatever the property, and by the shipments consumer too', () => {
    expect(permanentFailureOf(parse({ messageId: 'm-1', applicationProperties: { tenant: 'a', TENANT: 'b' } })).code).toBe('AmbiguousProperty');
    const envelope = envelopeFromTriggerMetadata({
      messageId: 'm-1',
      subject: 'OrderAccepted',
      applicationProperties: { 'retry-attempt': 1, 'Retry-Attempt': 2 },
    });
    expect(permanentFailureOf(() => parseShipmentEvent(envelope, { orderId: 'o-1' }, 262_144)).code).toBe('AmbiguousProperty');
  });
});

describe('control characters in keys and ids', () => {
  it('in an idempotency-key are refused as InvalidIdempotencyKey, naming the character', () => {
    const error = permanentFailureOf(parse({ messageId: 'm-1', applicationProperties: { 'idempotency-key': 'k-1\u001b[2J' } }));
    expect(error.code).toBe('InvalidIdempotencyKey');
    expect(error.description).toContain('U+001B');
  });

  it('in a MessageId used as the key are refused as InvalidIdempotencyKey', () => {
    for (const messageId of ['m-1\n', 'm\u0000', 'm\u007f', 'm\u0085']) {
      const error = permanentFailureOf(parse({ messageId }));
      expect(error.code, JSON.stringify(messageId)).toBe('InvalidIdempotencyKey');
      expect(error.description).toContain('MessageId');
    }
  });

  it('in a CloudEvent id or source are refused as InvalidCloudEvent', () => {
    for (const [id, source] of [
      ['e-1\r', '/shop'],
      ['e-1', '/shop\t'],
    ]) {
      const body = JSON.stringify({ specversion: '1.0', id, source, type: 'com.shop.PaymentReceived', data: paymentReceived('o-1') });
      const error = permanentFailureOf(() =>
        parseOrderMessage(envelopeFromTriggerMetadata({ messageId: 'm-1', contentType: 'application/cloudevents+json' }), body, options),
      );
      expect(error.code).toBe('InvalidCloudEvent');
      expect(error.description).toMatch(/control character/);
    }
  });

  it('leave printable keys, spaces and non-ASCII letters alone', () => {
    expect(parse({ messageId: 'm-1', applicationProperties: { 'idempotency-key': 'Bestellung 42 · Zürich' } })().key.value).toBe('Bestellung 42 · Zürich');
  });
});
