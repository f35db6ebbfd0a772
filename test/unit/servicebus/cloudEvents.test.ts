import { describe, expect, it } from 'vitest';
import { envelopeFromTriggerMetadata, unwrapCloudEvent } from '../../../src/servicebus/index.js';

const structured = 'application/cloudevents+json; charset=utf-8';
const envelope = (props: Record<string, unknown> = {}, contentType?: string) => envelopeFromTriggerMetadata({ applicationProperties: props, contentType });

describe('structured-mode CloudEvents', () => {
  it('are told by their content type only, in any case, with or without parameters', () => {
    const event = { id: 'e', source: 's', type: 't', data: { a: 1 } };
    expect(unwrapCloudEvent(envelope({}, structured), event).payload).toEqual({ a: 1 });
    expect(unwrapCloudEvent(envelope({}, 'Application/CloudEvents+JSON'), event).payload).toEqual({ a: 1 });
    for (const plain of ['application/json', 'text/application/cloudevents+json', 'application/cloudevents+jsonx', 'application/cloudevents-batch+json']) {
      expect(unwrapCloudEvent(envelope({}, plain), event), plain).toEqual({ payload: event });
    }
  });

  it('must be a JSON object: an array, a string, null or a number is refused as SchemaViolation', () => {
    for (const body of [[{ id: 'e' }], 'text', null, 42]) {
      expect(() => unwrapCloudEvent(envelope({}, structured), body), JSON.stringify(body)).toThrow(
        /^SchemaViolation: a structured CloudEvent must be a JSON object$/,
      );
    }
  });

  it('take data over data_base64, keep falsy data, and mark missing id and source as null', () => {
    expect(unwrapCloudEvent(envelope({}, structured), { data: 0, data_base64: 'e30=' })).toEqual({
      cloudEvent: { id: null, source: null, type: undefined, mode: 'structured' },
      payload: 0,
    });
    expect(unwrapCloudEvent(envelope({}, structured), { id: 'e', data: null }).payload).toBeNull();
  });

  it('refuses data_base64 that is not base64 JSON, and one that is not text', () => {
    expect(() => unwrapCloudEvent(envelope({}, structured), { id: 'e', source: 's', data_base64: Buffer.from('not json').toString('base64') })).toThrow(
      /^InvalidJson: data_base64: the CloudEvent data is not base64-encoded JSON$/,
    );
    expect(() => unwrapCloudEvent(envelope({}, structured), { id: 'e', source: 's', data_base64: 42 })).toThrow(
      /^SchemaViolation: data: a structured CloudEvent must carry data or data_base64$/,
    );
  });

  it('refuse a type that is not text, naming what it is', () => {
    expect(() => unwrapCloudEvent(envelope({}, structured), { id: 'e', source: 's', type: 7, data: {} })).toThrow(
      /^InvalidCloudEvent: the CloudEvent type must be a string, not number$/,
    );
    expect(() => unwrapCloudEvent(envelope({}, structured), { id: 'e', source: 's', type: null, data: {} })).toThrow(
      /^InvalidCloudEvent: the CloudEvent type must be a string, not null$/,
    );
  });
});

describe('binary-mode CloudEvents', () => {
  it('are told by an id or a source property alone, and a missing one is null', () => {
    expect(unwrapCloudEvent(envelope({ 'cloudEvents:id': 'e' }), { a: 1 })).toEqual({
      cloudEvent: { id: 'e', source: null, type: undefined, mode: 'binary' },
      payload: { a: 1 },
    });
    expect(unwrapCloudEvent(envelope({ 'cloudEvents:source': 's' }), { a: 1 }).cloudEvent).toEqual({ id: null, source: 's', type: undefined, mode: 'binary' });
  });

  it('are not told by a type alone, or by other properties', () => {
    expect(unwrapCloudEvent(envelope({ 'cloudEvents:type': 't', subject: 'x' }), { a: 1 })).toEqual({ payload: { a: 1 } });
  });

  it('take the colon spelling before the underscore one, and check the type', () => {
    expect(unwrapCloudEvent(envelope({ 'cloudEvents:id': 'colon', cloudEvents_id: 'underscore', 'cloudEvents:type': 'x.T' }), {}).cloudEvent).toMatchObject({
      id: 'colon',
      type: 'x.T',
    });
    expect(() => unwrapCloudEvent(envelope({ 'cloudEvents:id': 'e', 'cloudEvents:type': 3 }), {})).toThrow(
      /^InvalidCloudEvent: the CloudEvent type must be a string, not number$/,
    );
  });
});
