import { describe, expect, it } from 'vitest';
import { documentId, escapeIdPart, isCosmosSafeId } from '../../../src/idempotency/index.js';

describe('documentId', () => {
  it('keeps ordinary keys readable', () => {
    expect(documentId('inbox', 'pay-123')).toBe('inbox|pay-123');
  });

  it('escapes what Cosmos rejects and what the encoding reserves', () => {
    expect(escapeIdPart('a/b\\c?d#e%f|g*h\ni')).toBe('a%2Fb%5Cc%3Fd%23e%25f%7Cg%2Ah%0Ai');
    expect(isCosmosSafeId(documentId('inbox', 'a/b\\c?d#'))).toBe(true);
  });

  it('keeps unicode as it is', () => {
    expect(documentId('inbox', 'über-€-🚀')).toBe('inbox|über-€-🚀');
  });

  it('is deterministic and never maps two keys to one id', () => {
    const keys = ['a/b', 'a%2Fb', 'a|b', 'a%7Cb', 'a*b', 'a', 'A', 'a b', '*' + 'f'.repeat(64)];
    const ids = keys.map((k) => documentId('inbox', k));
    expect(new Set(ids).size).toBe(keys.length);
    expect(keys.map((k) => documentId('inbox', k))).toEqual(ids);
    expect(documentId('x', 'a|b')).not.toBe(documentId('x', 'a', 'b'));
  });

  it('hashes ids that would pass 255 characters, keeping the namespace', () => {
    const long = documentId('inbox', 'k'.repeat(300));
    expect(long).toMatch(/^inbox\|\*[0-9a-f]{64}$/);
    expect(long.length).toBeLessThanOrEqual(255);
    expect(documentId('inbox', 'k'.repeat(301))).not.toBe(long);
    expect(documentId('inbox', 'k'.repeat(249))).toBe(`inbox|${'k'.repeat(249)}`); // exactly 255
    expect(documentId('inbox', 'k'.repeat(250))).toMatch(/^inbox\|\*/);
  });

  it('counts escaped characters in the length, which can push a short key over', () => {
    expect(documentId('inbox', '/'.repeat(100)).length).toBeLessThanOrEqual(255);
  });
});

describe('isCosmosSafeId', () => {
  it('takes an id of 1 to 255 characters with none of the four Cosmos DB refuses nor a control character', () => {
    expect([isCosmosSafeId('a'), isCosmosSafeId('x'.repeat(255)), isCosmosSafeId('inbox|key%2F1')]).toEqual([true, true, true]);
  });

  it('refuses an empty id, one of 256 characters, and each of / \\ ? # and a control character', () => {
    const refused = ['', 'x'.repeat(256), 'a/b', 'a\\b', 'a?b', 'a#b', 'a\u0000b', 'a\nb', 'a\u007fb'];
    expect(refused.filter((id) => isCosmosSafeId(id))).toEqual([]);
  });
});
