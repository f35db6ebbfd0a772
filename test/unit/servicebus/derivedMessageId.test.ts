import { describe, expect, it } from 'vitest';
import { deriveMessageId, maxDerivedSuffixLength, maxMessageIdLength } from '../../../src/servicebus/index.js';

describe('deriveMessageId', () => {
  it('joins origin and suffix while they fit in 128 characters, the last one that fits included', () => {
    expect(maxMessageIdLength).toBe(128);
    expect(deriveMessageId('m-1', '~retry-2')).toBe('m-1~retry-2');
    const exact = 'e'.repeat(120);
    expect(deriveMessageId(exact, '~retry-')).toBe(`${exact}~retry-`);
    expect(deriveMessageId('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it('replaces an origin that would not fit by its SHA-256, keeping the suffix readable', () => {
    const origin = 'o'.repeat(121);
    const id = deriveMessageId(origin, '~retry-12');
    expect(id).toBe('~sha256:2a0a70290b5627175c3ce5feaaadf124e219f11f3d9cdc0e1688e52f89c3eea4~retry-12');
    expect(deriveMessageId(origin, '~retry-12')).toBe(id);
    expect(deriveMessageId('p'.repeat(121), '~retry-12')).not.toBe(id);
    expect(deriveMessageId('x'.repeat(129), '', { digestPrefix: 'outbox|*' })).toMatch(/^outbox\|\*[0-9a-f]{64}$/);
  });

  it('refuses a suffix that leaves no room for the digest', () => {
    expect(maxDerivedSuffixLength).toBe(56);
    expect(deriveMessageId('z'.repeat(200), 's'.repeat(56))).toHaveLength(128);
    expect(() => deriveMessageId('z'.repeat(200), 's'.repeat(57))).toThrow(/no room for a digest within 128/);
  });

  it('with a secret: an HMAC of origin and suffix that a sender cannot compute, the same for the same inputs, another for any other', () => {
    const secret = 's'.repeat(32);
    const id = deriveMessageId('pay-1#7', '~retry-1', { secret });
    expect(id).toMatch(/^~hmac:[0-9a-f]{64}~retry-1$/);
    expect(id).not.toContain('pay-1');
    expect(deriveMessageId('pay-1#7', '~retry-1', { secret })).toBe(id);
    const others = [
      deriveMessageId('pay-1#8', '~retry-1', { secret }),
      deriveMessageId('pay-1#7', '~retry-2', { secret }),
      deriveMessageId('pay-1#7', '~retry-1', { secret: 't'.repeat(32) }),
    ];
    expect(new Set([id, ...others]).size).toBe(4);
    expect(deriveMessageId('x'.repeat(500), '~retry-9', { secret })).toHaveLength(6 + 64 + 8);
  });
});
