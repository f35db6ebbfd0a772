import { describe, expect, it } from 'vitest';
import { PermanentMessageError } from '../../../src/idempotency/index.js';
import { applicationProperty, decodeJsonBody, envelopeFromTriggerMetadata, unwrapCloudEvent } from '../../../src/servicebus/index.js';

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

  it('finds application properties whatever their case', () => {
    const envelope = envelopeFromTriggerMetadata({ applicationProperties: { 'idempotency-Key': 'k' } });
    expect(applicationProperty(envelope, 'Idempotency-Key')).toBe('k');
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
  const envelope = (props: Record<string, unknown> = {}, contentType?: string) =>
    envelopeFromTriggerMetadata({ applicationProperties: props, contentType });

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
    expect(unwrapCloudEvent(envelope({ 'cloudEvents:id': 'e', 'cloudEvents:source': 's' }), {}).cloudEvent).toMatchObject({ id: 'e', source: 's', mode: 'binary' });
    expect(unwrapCloudEvent(envelope({ cloudEvents_id: 'e', cloudEvents_source: 's' }), {}).cloudEvent).toMatchObject({ id: 'e', source: 's' });
  });
});
