import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/configurationError.js';
import {
  PermanentMessageError,
  TransientStoreError,
  canonicalJson,
  fingerprintPayload,
  matchesQuery,
  maxDedupKeyLength,
  replace,
  resolveDedupKey,
} from '../../../src/idempotency/index.js';

describe('the typed errors', () => {
  it('carry their names, so logs and catch sites can tell them apart', () => {
    expect(new PermanentMessageError('SchemaViolation', 'bad').name).toBe('PermanentMessageError');
    expect(new TransientStoreError('busy', 429).name).toBe('TransientStoreError');
    expect(new ConfigurationError([]).name).toBe('ConfigurationError');
  });

  it('say code, description and, when there is one, the dedup key', () => {
    expect(new PermanentMessageError('SchemaViolation', 'bad').message).toBe('SchemaViolation: bad');
    expect(new PermanentMessageError('SchemaViolation', 'bad', 'k"1').message).toBe('SchemaViolation: bad (dedup key "k\\"1")');
    expect(new PermanentMessageError('SchemaViolation', 'bad', '').message).toBe('SchemaViolation: bad (dedup key "")');
  });

  it('name every setting problem in one message', () => {
    const error = new ConfigurationError([
      { setting: 'A', problem: 'is required' },
      { setting: 'B', problem: 'must be a number' },
    ]);
    expect(error.message).toBe('Invalid settings: A: is required; B: must be a number');
  });
});

describe('the MessageId as the key of last resort', () => {
  it('is used up to the length limit, and a blank or longer one leaves the message keyless', () => {
    expect(resolveDedupKey({ messageId: 'm'.repeat(maxDedupKeyLength) })?.value).toHaveLength(maxDedupKeyLength);
    expect(resolveDedupKey({ messageId: 'm'.repeat(maxDedupKeyLength + 1) })).toBeUndefined();
    expect(resolveDedupKey({ messageId: ' \t' })).toBeUndefined();
  });

  it('serves a CloudEvent that carries neither id nor source attribute at all', () => {
    expect(resolveDedupKey({ cloudEvent: {}, messageId: 'm1' })).toEqual({ value: 'm1', source: 'message-id' });
    expect(() => resolveDedupKey({ cloudEvent: { id: 'e1' }, messageId: 'm1' })).toThrow(/InvalidCloudEvent: the CloudEvent source is missing/);
    expect(() => resolveDedupKey({ cloudEvent: { source: '/s' }, messageId: 'm1' })).toThrow(/InvalidCloudEvent: the CloudEvent id is missing/);
  });
});

describe('fingerprints', () => {
  it('refuse a value with no JSON form instead of hashing nothing', () => {
    expect(() => canonicalJson(undefined)).toThrow(new TypeError('canonicalJson: the value has no JSON form'));
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
    expect(canonicalJson({ b: [1, 2], a: 'x' })).toBe('{"a":"x","b":[1,2]}');
  });

  it('are the SHA-256 of the canonical {payload, type}', () => {
    // sha256('{"payload":{"a":1},"type":"T"}')
    expect(fingerprintPayload('T', { a: 1 })).toBe('502f8b69a53be4ec92bcf1265ccd02d63e551a1571f87853d6fe8a2f8b699886');
  });
});

describe('queries in memory', () => {
  it('keep only documents whose field sorts strictly before the bound, and only text fields', () => {
    const q = { docType: 'parked', before: { field: 'at', value: '2026-01-02' } };
    expect(matchesQuery({ docType: 'parked', at: '2026-01-01' }, q)).toBe(true);
    expect(matchesQuery({ docType: 'parked', at: '2026-01-02' }, q)).toBe(false);
    expect(matchesQuery({ docType: 'parked', at: 20260101 }, q)).toBe(false);
    expect(matchesQuery({ docType: 'other', at: '2026-01-01' }, q)).toBe(false);
  });

  it('build a replace that names its kind, document and etag', () => {
    expect(replace({ id: 'd' }, '"7"')).toEqual({ kind: 'replace', document: { id: 'd' }, ifMatch: '"7"' });
  });
});
