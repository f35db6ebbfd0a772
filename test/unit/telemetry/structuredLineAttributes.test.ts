import { describe, expect, it } from 'vitest';
import { StructuredLineAttributes, structuredFields } from '../../../src/telemetry/index.js';

describe('structured lines as custom dimensions', () => {
  it('turns a line with an event into attributes: strings, numbers and booleans as they are, nested values as JSON, nulls left out', () => {
    const line = JSON.stringify({
      event: 'order-message',
      outcome: 'duplicate',
      dedupKey: 'm-1',
      deliveryCount: 2,
      replayed: false,
      missing: null,
      nested: { a: 1 },
    });
    expect(structuredFields(line)).toEqual({
      event: 'order-message',
      outcome: 'duplicate',
      dedupKey: 'm-1',
      deliveryCount: 2,
      replayed: false,
      nested: '{"a":1}',
    });
  });

  it('leaves alone what is not such a line: plain text, JSON without an event, arrays, broken JSON, non-strings', () => {
    for (const body of ['processing o-1', '{"outcome":"x"}', '[1,2]', '{"event":', 42, undefined, '{"event":7}'])
      expect(structuredFields(body), String(body)).toBeUndefined();
  });

  it('sets the attributes on the log record as the SDK emits it, and no others', () => {
    const set: Record<string, unknown>[] = [];
    const processor = new StructuredLineAttributes();
    processor.onEmit({ body: '{"event":"order-request","status":422}', setAttributes: (a) => set.push(a) });
    processor.onEmit({ body: 'plain', setAttributes: (a) => set.push(a) });
    expect(set).toEqual([{ event: 'order-request', status: 422 }]);
  });
});
