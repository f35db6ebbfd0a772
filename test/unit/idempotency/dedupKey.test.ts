import { describe, expect, it } from 'vitest';
import { PermanentMessageError, joinKeyParts, maxDedupKeyLength, resolveDedupKey } from '../../../src/idempotency/index.js';

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

  const refusal = (candidates: Parameters<typeof resolveDedupKey>[0]) => {
    try {
      resolveDedupKey(candidates);
    } catch (error) {
      if (error instanceof PermanentMessageError) return `${error.code}: ${error.description}`;
      throw error;
    }
    return 'accepted';
  };

  it('refuses a declared idempotency key that is empty, white space, too long or not text, never falling back to the MessageId', () => {
    expect(refusal({ idempotencyKey: '', messageId: 'm1' })).toBe('InvalidIdempotencyKey: the idempotency-key property is empty or white space');
    expect(refusal({ idempotencyKey: ' \t', messageId: 'm1' })).toBe('InvalidIdempotencyKey: the idempotency-key property is empty or white space');
    expect(refusal({ idempotencyKey: 'k'.repeat(maxDedupKeyLength + 1), messageId: 'm1' })).toBe(
      `InvalidIdempotencyKey: the idempotency-key property has ${maxDedupKeyLength + 1} characters; the limit is ${maxDedupKeyLength}`,
    );
    expect(refusal({ idempotencyKey: true, messageId: 'm1' })).toBe('InvalidIdempotencyKey: the idempotency-key property must be a string, not boolean');
  });

  it('accepts a key of exactly the maximum length', () => {
    expect(resolveDedupKey({ idempotencyKey: 'k'.repeat(maxDedupKeyLength) })?.value).toHaveLength(maxDedupKeyLength);
  });

  it('refuses CloudEvents attributes with an id but no source, the reverse, or of the wrong type', () => {
    expect(refusal({ cloudEvent: { id: 'e1' }, messageId: 'm1' })).toBe('InvalidCloudEvent: the CloudEvent source is missing');
    expect(refusal({ cloudEvent: { source: '/shop', id: null }, messageId: 'm1' })).toBe('InvalidCloudEvent: the CloudEvent id is missing');
    expect(refusal({ cloudEvent: { source: '', id: 'e1' }, messageId: 'm1' })).toBe('InvalidCloudEvent: the CloudEvent source is empty or white space');
    expect(refusal({ cloudEvent: { source: '/shop', id: 7 }, messageId: 'm1' })).toBe('InvalidCloudEvent: the CloudEvent id must be a string, not number');
  });

  it('escapes % and | so that no two different part lists share a key', () => {
    expect(resolveDedupKey({ cloudEvent: { source: 'a%', id: 'b' } })?.value).toBe('a%25|b');
    expect(resolveDedupKey({ cloudEvent: { source: 'a', id: 'b' } })?.value).toBe('a|b');
    expect(resolveDedupKey({ cloudEvent: { source: 'a|b', id: 'c' } })?.value).toBe('a%7Cb|c');
    expect(joinKeyParts(['a%'])).not.toBe(joinKeyParts(['a']));
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
