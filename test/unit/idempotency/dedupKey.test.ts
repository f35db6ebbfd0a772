import { describe, expect, it } from 'vitest';
import { joinKeyParts, resolveDedupKey } from '../../../src/idempotency/index.js';

describe('resolveDedupKey', () => {
  const all = { idempotencyKey: 'explicit', cloudEvent: { source: '/shop', id: 'e1' }, messageId: 'm1' };

  it('prefers the idempotency-key property', () => {
    expect(resolveDedupKey(all)).toEqual({ value: 'explicit', source: 'idempotency-key' });
  });

  it('then CloudEvents source and id', () => {
    expect(resolveDedupKey({ ...all, idempotencyKey: undefined })).toEqual({ value: '/shop|e1', source: 'cloudevents' });
  });

  it('then the MessageId', () => {
    expect(resolveDedupKey({ messageId: 'm1' })).toEqual({ value: 'm1', source: 'message-id' });
  });

  it('ignores blank candidates and a CloudEvent missing its source', () => {
    expect(resolveDedupKey({ idempotencyKey: '  ', cloudEvent: { source: '', id: 'e1' }, messageId: 'm1' })?.source).toBe('message-id');
  });

  it('returns undefined when nothing usable is left: the message must not be processed keyless', () => {
    expect(resolveDedupKey({})).toBeUndefined();
    expect(resolveDedupKey({ messageId: '' })).toBeUndefined();
    expect(resolveDedupKey({ messageId: 'x'.repeat(5000) })).toBeUndefined();
  });

  it('prefixes the consumer name so that consumers sharing one store never collide', () => {
    expect(resolveDedupKey({ messageId: 'm1' }, 'billing')?.value).toBe('billing|m1');
    expect(resolveDedupKey({ messageId: 'm1' }, 'shipping')?.value).not.toBe(resolveDedupKey({ messageId: 'm1' }, 'billing')?.value);
  });

  it('keeps composite keys unambiguous when the parts contain the separator', () => {
    expect(resolveDedupKey({ messageId: 'b|m1' }, 'a')?.value).not.toBe(resolveDedupKey({ messageId: 'm1' }, 'a|b')?.value);
    expect(joinKeyParts(['a|b', 'c'])).not.toBe(joinKeyParts(['a', 'b|c']));
    expect(joinKeyParts(['a%7Cb'])).not.toBe(joinKeyParts(['a|b']));
  });

  it('gives the CloudEvents key as the text an operator can pin with idempotency-key', () => {
    const fromEvent = resolveDedupKey({ cloudEvent: { source: 'urn:x', id: '7' }, messageId: 'first' });
    const resubmitted = resolveDedupKey({ idempotencyKey: fromEvent?.value, messageId: 'new-id' });
    expect(resubmitted?.value).toBe(fromEvent?.value);
  });
});
