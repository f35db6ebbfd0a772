import { describe, expect, it } from 'vitest';
import { permanentFailureOf } from '../../support/permanentFailure.js';
import { parseOrderMessage, resolveMessageType } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

const options = { maxMessageBytes: 262_144 };
const envelope = (meta: Record<string, unknown>) => envelopeFromTriggerMetadata({ messageId: 'm-1', ...meta });

const failure = permanentFailureOf;

describe('resolveMessageType', () => {
  it('takes the subject first, then the CloudEvents type, then a type field', () => {
    expect(resolveMessageType('OrderPlaced', 'x.PaymentReceived', { type: 'OrderStatusChanged' })).toBe('OrderPlaced');
    expect(resolveMessageType(undefined, 'com.shop.PaymentReceived', { type: 'OrderStatusChanged' })).toBe('PaymentReceived');
    expect(resolveMessageType(undefined, undefined, { type: 'OrderStatusChanged' })).toBe('OrderStatusChanged');
  });
});

describe('parseOrderMessage', () => {
  it('returns the validated payload, its key and fingerprint', () => {
    const parsed = parseOrderMessage(envelope({ subject: 'OrderPlaced' }), orderPlaced('o-1'), options);
    expect(parsed).toMatchObject({ type: 'OrderPlaced', key: { value: 'm-1', source: 'message-id' }, messageId: 'm-1', payload: { orderId: 'o-1' } });
    expect(parsed.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('lists every schema problem with its field path', () => {
    const body = paymentReceived('o-1', { amount: -1, currency: 'eur', receivedAt: 'yesterday' });
    const error = failure(() => parseOrderMessage(envelope({ subject: 'PaymentReceived' }), body, options));
    expect(error.code).toBe('SchemaViolation');
    expect(error.description).toMatch(/^PaymentReceived: /);
    expect(error.description).toContain('amount: must be > 0');
    expect(error.description).toContain('currency: must be an ISO 4217 currency code');
    expect(error.description).toContain('receivedAt:');
    expect(error.dedupKey).toBe('m-1');
  });

  it('refuses amounts with more than four decimals and quantities that are not positive integers', () => {
    const error = failure(() =>
      parseOrderMessage(envelope({ subject: 'OrderPlaced' }), orderPlaced('o-1', { lines: [{ sku: 'A', quantity: 1.5, unitPrice: 0.00001 }] }), options),
    );
    expect(error.description).toContain('lines[0].quantity');
    expect(error.description).toContain('lines[0].unitPrice: must have at most four decimal places');
  });

  it('refuses an empty order and one of more than 100 lines', () => {
    const line = { sku: 'A', quantity: 1, unitPrice: 1 };
    expect(failure(() => parseOrderMessage(envelope({ subject: 'OrderPlaced' }), orderPlaced('o', { lines: [] }), options)).description).toContain('lines:');
    expect(
      failure(() => parseOrderMessage(envelope({ subject: 'OrderPlaced' }), orderPlaced('o', { lines: Array(101).fill(line) }), options)).description,
    ).toContain('lines:');
  });

  it('refuses a status outside the list and a version that is not a positive integer', () => {
    const body = { orderId: 'o', status: 'Lost', version: 0, changedAt: '2026-11-30T00:00:00Z' };
    const error = failure(() => parseOrderMessage(envelope({ subject: 'OrderStatusChanged' }), body, options));
    expect(error.description).toContain('status:');
    expect(error.description).toContain('version:');
  });

  it('never falls back to the correlation id, sequence number or lock token for a key', () => {
    const keyless = envelopeFromTriggerMetadata({ correlationId: 'c', sequenceNumber: 5, lockToken: 'l', subject: 'OrderPlaced' });
    expect(failure(() => parseOrderMessage(keyless, orderPlaced('o'), options)).code).toBe('NoDedupKey');
  });

  it('prefixes the consumer name to the key', () => {
    expect(parseOrderMessage(envelope({ subject: 'OrderPlaced' }), orderPlaced('o'), { ...options, consumerName: 'billing' }).key.value).toBe('billing|m-1');
  });

  it('uses a numeric idempotency-key as its decimal text', () => {
    expect(parseOrderMessage(envelope({ subject: 'OrderPlaced', applicationProperties: { 'idempotency-key': 42 } }), orderPlaced('o'), options).key).toEqual({
      value: '42',
      source: 'idempotency-key',
    });
  });

  it('rejects a declared idempotency-key that is empty instead of falling back to the MessageId', () => {
    const error = failure(() =>
      parseOrderMessage(envelope({ subject: 'OrderPlaced', applicationProperties: { 'Idempotency-Key': '' } }), orderPlaced('o'), options),
    );
    expect([error.code, error.description]).toEqual(['InvalidIdempotencyKey', 'the idempotency-key property is empty or white space']);
  });

  it('rejects a structured CloudEvent with an id but no source, and one with neither', () => {
    const structured = envelope({ contentType: 'application/cloudevents+json; charset=utf-8' });
    const event = { specversion: '1.0', type: 'com.shop.OrderPlaced', data: orderPlaced('o') };
    expect(failure(() => parseOrderMessage(structured, { ...event, id: 'e1' }, options)).code).toBe('InvalidCloudEvent');
    expect(failure(() => parseOrderMessage(structured, event, options)).description).toBe('the CloudEvent source is missing');
    expect(parseOrderMessage(structured, { ...event, id: 'e1', source: '/shop' }, options).key).toEqual({ value: '/shop|e1', source: 'cloudevents' });
  });

  it('rejects binary-mode CloudEvents properties with a source but no id, or a type that is not text', () => {
    const binary = (props: Record<string, unknown>) => envelope({ subject: 'OrderPlaced', applicationProperties: props });
    expect(failure(() => parseOrderMessage(binary({ 'cloudEvents:source': '/shop' }), orderPlaced('o'), options)).description).toBe(
      'the CloudEvent id is missing',
    );
    expect(
      failure(() => parseOrderMessage(binary({ 'cloudEvents:source': '/shop', 'cloudEvents:id': 'e', 'cloudEvents:type': 5 }), orderPlaced('o'), options)).code,
    ).toBe('InvalidCloudEvent');
  });

  it('treats a plain message with a content type as plain, not as a structured CloudEvent', () => {
    const parsed = parseOrderMessage(envelope({ subject: 'OrderPlaced', contentType: 'application/json' }), orderPlaced('o'), options);
    expect(parsed.key).toEqual({ value: 'm-1', source: 'message-id' });
  });
});
