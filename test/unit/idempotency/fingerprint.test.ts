import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintPayload } from '../../../src/idempotency/index.js';

describe('fingerprintPayload', () => {
  it('is the same whatever the key order and white space of the producer', () => {
    const a = JSON.parse('{"b": [1, {"y": 2, "x": 1}], "a": "s"}');
    const b = JSON.parse('{ "a":"s","b":[1,{"x":1,"y":2}] }');
    expect(fingerprintPayload('T', a)).toBe(fingerprintPayload('T', b));
  });

  it('differs when a value, an array order or the type differs', () => {
    const base = fingerprintPayload('T', { a: [1, 2] });
    expect(fingerprintPayload('T', { a: [2, 1] })).not.toBe(base);
    expect(fingerprintPayload('T', { a: [1, 3] })).not.toBe(base);
    expect(fingerprintPayload('U', { a: [1, 2] })).not.toBe(base);
  });

  it('is SHA-256 of the canonical text, in hex', () => {
    // echo -n '{"payload":{"a":1},"type":"T"}' | sha256sum
    expect(fingerprintPayload('T', { a: 1 })).toBe('502f8b69a53be4ec92bcf1265ccd02d63e551a1571f87853d6fe8a2f8b699886');
    expect(canonicalJson({ type: 'T', payload: { a: 1 } })).toBe('{"payload":{"a":1},"type":"T"}');
  });

  it('writes numbers in their shortest form, so 1.0 and 1 are one payload', () => {
    expect(canonicalJson(JSON.parse('{"n": 1.0, "m": 1e2}'))).toBe('{"m":100,"n":1}');
  });
});
