import { describe, expect, it } from 'vitest';
import { PermanentMessageError } from '../../../src/idempotency/index.js';
import {
  applicationProperty,
  decodeJsonBody,
  envelopeFromInvocation,
  envelopeFromTriggerMetadata,
  unwrapCloudEvent,
  withoutFieldsTheBodyMayHaveWritten,
} from '../../../src/servicebus/index.js';

describe('envelopeFromTriggerMetadata', () => {
  it('reads the fields the host sends and tolerates the ones it leaves out', () => {
    expect(envelopeFromTriggerMetadata({ messageId: 'm', deliveryCount: 2, sequenceNumber: 7, label: 'OrderPlaced' })).toEqual({
      messageId: 'm',
      correlationId: undefined,
      contentType: undefined,
      subject: 'OrderPlaced',
      deliveryCount: 2,
      sequenceNumber: 7,
      enqueuedTimeUtc: undefined,
      applicationProperties: {},
    });
    expect(envelopeFromTriggerMetadata(undefined).applicationProperties).toEqual({});
  });

  it('takes counts sent as digit strings and ids sent as numbers, and drops what is neither', () => {
    const envelope = envelopeFromTriggerMetadata({
      messageId: 1234,
      correlationId: 10n,
      deliveryCount: '3',
      sequenceNumber: '42',
      subject: 'OrderPlaced',
      label: 'ignored',
    });
    expect(envelope).toMatchObject({ messageId: '1234', correlationId: '10', deliveryCount: 3, sequenceNumber: 42, subject: 'OrderPlaced' });
    const odd = envelopeFromTriggerMetadata({ messageId: { id: 'm' }, deliveryCount: 1.5, sequenceNumber: '-1', contentType: true, enqueuedTimeUtc: null });
    expect(odd).toEqual({
      messageId: undefined,
      correlationId: undefined,
      contentType: undefined,
      subject: undefined,
      deliveryCount: undefined,
      sequenceNumber: undefined,
      enqueuedTimeUtc: undefined,
      applicationProperties: {},
    });
    expect(envelopeFromTriggerMetadata({ deliveryCount: '2x' }).deliveryCount).toBeUndefined();
  });

  it('reads application properties from userProperties too (older hosts), and only from an object', () => {
    expect(envelopeFromTriggerMetadata({ userProperties: { a: 1 } }).applicationProperties).toEqual({ a: 1 });
    expect(envelopeFromTriggerMetadata({ applicationProperties: { b: 2 }, userProperties: { a: 1 } }).applicationProperties).toEqual({ b: 2 });
    expect(envelopeFromTriggerMetadata({ applicationProperties: ['a'], userProperties: null }).applicationProperties).toEqual({});
    expect(envelopeFromTriggerMetadata({ applicationProperties: 'a=1' }).applicationProperties).toEqual({});
  });

  it("carries the invocation trace context, not the message's, and nothing when there is none", () => {
    const traceParent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(envelopeFromInvocation({ triggerMetadata: { messageId: 'm' }, traceContext: { traceParent } })).toMatchObject({
      messageId: 'm',
      traceparent: traceParent,
    });
    expect(envelopeFromInvocation({ triggerMetadata: { messageId: 'm' }, traceContext: { traceParent: null } })).not.toHaveProperty('traceparent');
    expect(envelopeFromInvocation({ triggerMetadata: { messageId: 'm' } })).not.toHaveProperty('traceparent');
  });

  it('finds application properties whatever their case', () => {
    const envelope = envelopeFromTriggerMetadata({ applicationProperties: { 'idempotency-Key': 'k' } });
    expect(applicationProperty(envelope, 'Idempotency-Key')).toBe('k');
    expect(applicationProperty(envelopeFromTriggerMetadata({ applicationProperties: { undefined: 'x' } }), 'idempotency-key')).toBeUndefined();
  });
});

describe('envelopeFromTriggerMetadata with the body the handler was given', () => {
  // As the host sends it: the broker's fields, then the body's top-level properties written over them.
  const metadata = (over: Record<string, unknown>) => ({
    messageId: 'm',
    subject: 'OrderPlaced',
    label: 'OrderPlaced',
    deliveryCount: 2,
    sequenceNumber: 9,
    enqueuedTimeUtc: '2026-12-03T10:00:00Z',
    applicationProperties: { 'idempotency-key': 'k' },
    userProperties: { 'idempotency-key': 'k' },
    ...over,
  });

  it("reads a field the body wrote from the host's back-compat copy, or not at all", () => {
    const body = { subject: 'orders/o-1', applicationProperties: { a: 1 }, deliveryCount: 7, SequenceNumber: 8, enqueuedTimeUtc: '2000-01-01T00:00:00Z' };
    const written = metadata({
      subject: 'orders/o-1',
      applicationProperties: { a: 1 },
      deliveryCount: '7',
      sequenceNumber: '8',
      enqueuedTimeUtc: '2000-01-01T00:00:00Z',
    });
    expect(envelopeFromTriggerMetadata(written, body)).toEqual({
      messageId: 'm',
      correlationId: undefined,
      contentType: undefined,
      subject: 'OrderPlaced',
      deliveryCount: undefined,
      sequenceNumber: undefined,
      enqueuedTimeUtc: undefined,
      applicationProperties: { 'idempotency-key': 'k' },
    });
  });

  it('knows nothing of a field whose copy the body wrote too', () => {
    const body = { subject: 's', label: 'l', applicationProperties: { a: 1 }, userProperties: { b: 2 } };
    const envelope = envelopeFromTriggerMetadata(metadata({ ...body }), body);
    expect(envelope.subject).toBeUndefined();
    expect(envelope.applicationProperties).toEqual({});
    // The body wrote the copy only: the field itself is the broker's.
    expect(envelopeFromTriggerMetadata(metadata({ label: 'x' }), { label: 'x' }).subject).toBe('OrderPlaced');
  });

  it('reads every field as sent for a body that names none of them, and for no body', () => {
    const plain = metadata({});
    expect(envelopeFromTriggerMetadata(plain, { orderId: 'o', data: { subject: 'x' } })).toEqual(envelopeFromTriggerMetadata(plain));
    expect(envelopeFromInvocation({ triggerMetadata: metadata({ subject: 'x' }) }, { subject: 'x' }).subject).toBe('OrderPlaced');
  });
});

describe('withoutFieldsTheBodyMayHaveWritten', () => {
  const delivered = envelopeFromTriggerMetadata({ messageId: 'm', subject: 'OrderPlaced', deliveryCount: 3, sequenceNumber: 42 });

  it('forgets the delivery count and sequence number a body names at its top level, whatever their case', () => {
    expect(withoutFieldsTheBodyMayHaveWritten(delivered, { orderId: 'o', SequenceNumber: 1 })).toMatchObject({
      messageId: 'm',
      subject: 'OrderPlaced',
      deliveryCount: 3,
      sequenceNumber: undefined,
    });
    expect(withoutFieldsTheBodyMayHaveWritten(delivered, { deliverycount: 1 })).toMatchObject({ deliveryCount: undefined, sequenceNumber: 42 });
    // The host upper-cases to compare: a long s is an S, a dotless i an I.
    expect(withoutFieldsTheBodyMayHaveWritten(delivered, { '\u017fequenceNumber': 1, 'del\u0131veryCount': 1 })).toMatchObject({
      deliveryCount: undefined,
      sequenceNumber: undefined,
    });
    expect(withoutFieldsTheBodyMayHaveWritten(delivered, { deliveryCount: null, sequenceNumber: [1] })).toMatchObject({
      deliveryCount: undefined,
      sequenceNumber: undefined,
    });
  });

  it('forgets both for text or bytes that the host may have read as an object, whose names it cannot know', () => {
    const lenient = "\u00a0 {'sequenceNumber': 1} \n";
    for (const body of [lenient, Buffer.from(lenient), '{}', Buffer.from('\ufeff{"a":1}\r\n')]) {
      expect(withoutFieldsTheBodyMayHaveWritten(delivered, body)).toMatchObject({
        messageId: 'm',
        subject: 'OrderPlaced',
        deliveryCount: undefined,
        sequenceNumber: undefined,
      });
    }
  });

  it('keeps them for a body that names neither, or that the host never read as a JSON object', () => {
    expect(withoutFieldsTheBodyMayHaveWritten(delivered, { orderId: 'o', data: { sequenceNumber: 1 } })).toBe(delivered);
    for (const body of ['plain text', ' {"sequenceNumber":1', Buffer.from('[{"sequenceNumber":1}]'), '{', [{ sequenceNumber: 1 }], null, 7]) {
      expect(withoutFieldsTheBodyMayHaveWritten(delivered, body)).toBe(delivered);
    }
    // White space alone, as text or bytes: the look stops at either end (a byte past the end reads as 0, a blank).
    for (const body of ['', ' \r\n\t', Buffer.from(''), Buffer.from(' \u00a0\n')]) {
      expect(withoutFieldsTheBodyMayHaveWritten(delivered, body)).toBe(delivered);
    }
    const inherited = Object.create({ sequenceNumber: 1 }) as object;
    expect(withoutFieldsTheBodyMayHaveWritten(delivered, inherited)).toBe(delivered);
  });
});

describe('decodeJsonBody', () => {
  it('accepts an already parsed body, a JSON string and JSON bytes', () => {
    expect(decodeJsonBody({ a: 1 }, 1024)).toEqual({ a: 1 });
    expect(decodeJsonBody('{"a":1}', 1024)).toEqual({ a: 1 });
    expect(decodeJsonBody(new TextEncoder().encode('{"a":1}'), 1024)).toEqual({ a: 1 });
  });

  it('refuses an empty, non-JSON or oversize body permanently', () => {
    expect(() => decodeJsonBody(undefined, 1024)).toThrow(PermanentMessageError);
    expect(() => decodeJsonBody('nope', 1024)).toThrow(/InvalidJson: the body is not JSON/);
    expect(() => decodeJsonBody('x'.repeat(2000), 1024)).toThrow(/MessageTooLarge: the body has 2000 bytes; the limit is 1024/);
  });
});

describe('decodeJsonBody on hostile nesting', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('refuses a body nested 50,000 deep, as text or already parsed, permanently and without overflowing the stack', () => {
    expect(() => decodeJsonBody(nested(50_000), 10_000_000)).toThrow(/^BodyTooDeep: the body nests deeper than 64 levels$/);
    expect(() => decodeJsonBody(JSON.parse(nested(50_000)), 10_000_000)).toThrow(/^BodyTooDeep: /);
    expect(() => decodeJsonBody(new TextEncoder().encode(nested(65)), 10_000_000)).toThrow(/^BodyTooDeep: /);
  });

  it('accepts exactly the limit, and does not count brackets inside strings', () => {
    expect(decodeJsonBody(nested(64), 1024)).toHaveLength(1);
    expect(decodeJsonBody(JSON.parse(nested(64)), 1024)).toHaveLength(1);
    expect(decodeJsonBody(JSON.stringify({ note: '['.repeat(500), quoted: 'a\\"[[' }), 4096)).toMatchObject({ note: '['.repeat(500) });
  });
});

describe('unwrapCloudEvent', () => {
  const envelope = (props: Record<string, unknown> = {}, contentType?: string) => envelopeFromTriggerMetadata({ applicationProperties: props, contentType });

  it('leaves a plain message alone', () => {
    expect(unwrapCloudEvent(envelope(), { a: 1 })).toEqual({ payload: { a: 1 } });
  });

  it('unwraps structured mode, including data_base64', () => {
    const data = Buffer.from(JSON.stringify({ a: 1 })).toString('base64');
    const unwrapped = unwrapCloudEvent(envelope({}, 'application/cloudevents+json'), { id: 'e', source: 's', type: 't.X', data_base64: data });
    expect(unwrapped).toEqual({ cloudEvent: { id: 'e', source: 's', type: 't.X', mode: 'structured' }, payload: { a: 1 } });
  });

  it('refuses a structured event without data', () => {
    expect(() => unwrapCloudEvent(envelope({}, 'application/cloudevents+json'), { id: 'e', source: 's' })).toThrow(/data_base64/);
  });

  it('recognises binary mode by cloudEvents: or cloudEvents_ properties', () => {
    expect(unwrapCloudEvent(envelope({ 'cloudEvents:id': 'e', 'cloudEvents:source': 's' }), {}).cloudEvent).toMatchObject({
      id: 'e',
      source: 's',
      mode: 'binary',
    });
    expect(unwrapCloudEvent(envelope({ cloudEvents_id: 'e', cloudEvents_source: 's' }), {}).cloudEvent).toMatchObject({ id: 'e', source: 's' });
  });
});
