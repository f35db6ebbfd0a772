import { describe, expect, it } from 'vitest';
import { PermanentMessageError } from '../../../src/idempotency/index.js';
import { dedupKeyOf, parseOrderMessage, resolveMessageType } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { permanentFailureOf } from '../../support/permanentFailure.js';

const envelope = (meta: Record<string, unknown>) => envelopeFromTriggerMetadata(meta);

describe('dedupKeyOf, what the operator tool derives', () => {
  it('finds the key of a message whose body is unreadable, from its MessageId or declared key', () => {
    expect(dedupKeyOf(envelope({ messageId: 'm-1' }), 'not json')).toBe('m-1');
    expect(dedupKeyOf(envelope({ messageId: 'm-1', applicationProperties: { 'idempotency-key': 'k-1' } }), 'not json')).toBe('k-1');
  });

  it('takes CloudEvents source and id from a structured body, and the consumer name as prefix', () => {
    const event = { id: 'e-1', source: '/shop', type: 'x.OrderPlaced', data: {} };
    expect(dedupKeyOf(envelope({ messageId: 'm-1', contentType: 'application/cloudevents+json' }), event)).toBe('/shop|e-1');
    expect(dedupKeyOf(envelope({ messageId: 'm-1' }), {}, 'billing')).toBe('billing|m-1');
  });

  it('has no key for a declared key that is unusable, rather than falling back to the MessageId', () => {
    expect(dedupKeyOf(envelope({ messageId: 'm-1', applicationProperties: { 'idempotency-key': ' ' } }), {})).toBeUndefined();
    expect(dedupKeyOf(envelope({}), {})).toBeUndefined();
  });

  it('reads a numeric key as its decimal text, and refuses one that is not a finite number', () => {
    expect(dedupKeyOf(envelope({ messageId: 'm-1', applicationProperties: { 'idempotency-key': 42 } }), {})).toBe('42');
    expect(dedupKeyOf(envelope({ messageId: 'm-1', applicationProperties: { 'idempotency-key': Number.NaN } }), {})).toBeUndefined();
  });
});

describe('resolveMessageType', () => {
  it('reads a type field only from an object body, and only as text', () => {
    expect(resolveMessageType(undefined, undefined, { type: 'PaymentReceived' })).toBe('PaymentReceived');
    expect(() => resolveMessageType(undefined, undefined, { type: 7 })).toThrow(
      /^UnknownMessageType: the message has no subject, CloudEvents type or type field$/,
    );
    expect(() => resolveMessageType(undefined, undefined, null)).toThrow(/no subject, CloudEvents type or type field/);
    expect(() => resolveMessageType(undefined, undefined, 'OrderPlaced')).toThrow(/no subject, CloudEvents type or type field/);
  });

  it('names the type it does not know and the ones it does', () => {
    const error = permanentFailureOf(() => resolveMessageType('OrderShipped', undefined, {}, 'k-1'));
    expect(error).toBeInstanceOf(PermanentMessageError);
    expect(error.message).toBe('UnknownMessageType: type "OrderShipped" is not one of OrderPlaced, PaymentReceived, OrderStatusChanged (dedup key "k-1")');
  });
});

describe('parseOrderMessage', () => {
  it('says which keys it looked for when a message has none', () => {
    const error = permanentFailureOf(() => parseOrderMessage(envelope({ subject: 'OrderPlaced' }), orderPlaced('o-1'), { maxMessageBytes: 262_144 }));
    expect(error.message).toBe('NoDedupKey: the message has no idempotency-key property, CloudEvents source and id, or MessageId');
  });

  it('carries the invocation trace context with the parsed message, and none when there is none', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const parse = (meta: Record<string, unknown>) =>
      parseOrderMessage({ ...envelope({ messageId: 'm-1', subject: 'OrderPlaced' }), ...meta }, orderPlaced('o-1'), { maxMessageBytes: 262_144 });
    expect(parse({ traceparent }).traceparent).toBe(traceparent);
    expect(parse({})).not.toHaveProperty('traceparent');
    expect(parse({ traceparent: '' })).not.toHaveProperty('traceparent');
  });
});
