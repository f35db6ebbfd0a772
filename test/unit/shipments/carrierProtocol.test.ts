import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey } from '../../../src/http/idempotencyKeyHeader.js';
import { idempotencyKeyHeader, idempotencyKeyValue, retryAfterMs } from '../../../src/shipments/carrierHeaders.js';
import { childTraceparent } from '../../../src/telemetry/index.js';

describe('the carrier protocol', () => {
  it('sends the key as an sf-string that a strict parser reads back to the same key', () => {
    for (const key of ['/idempotent-order-consumer/orders|outbox%7COrderAccepted%7Co-1', 'with "quotes" and \\\\ backslashes', 'x']) {
      expect(parseIdempotencyKey(idempotencyKeyHeader(key))).toBe(key);
    }
    expect(parseIdempotencyKey(idempotencyKeyHeader('café'))).toBe(idempotencyKeyValue('café'));
    expect(idempotencyKeyValue('café')).toBe('caf%C3%A9');
  });

  it('the stand-in refuses what the draft calls malformed: unquoted, unescaped quotes, control characters, empty', () => {
    for (const bad of ['abc', '"a"b"', '"a\\x"', '"\u0001"', '""', '"abc', '"a\\"', '"é"']) expect(parseIdempotencyKey(bad)).toBeUndefined();
    expect(parseIdempotencyKey('  "a\\\\b"  ')).toBe('a\\b');
    expect(parseIdempotencyKey(null)).toBeUndefined();
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('7', 0)).toBe(7000);
    expect(retryAfterMs('Tue, 01 Dec 2026 10:00:30 GMT', Date.parse('2026-12-01T10:00:00Z'))).toBe(30_000);
    expect(retryAfterMs('Tue, 01 Dec 2026 09:00:00 GMT', Date.parse('2026-12-01T10:00:00Z'))).toBe(0);
    expect(retryAfterMs(null, 0)).toBeUndefined();
    expect(retryAfterMs('soon', 0)).toBeUndefined();
  });

  it('reads Retry-After seconds with white space around them, only as whole digits, and nothing from a blank value', () => {
    expect(retryAfterMs(' 12 ', 0)).toBe(12_000);
    expect(retryAfterMs('120', 0)).toBe(120_000);
    expect(retryAfterMs('   ', 0)).toBeUndefined();
    expect(retryAfterMs('', 0)).toBeUndefined();
    // Neither a number with a fraction or a sign nor digits inside other text are seconds; as dates they are nothing either.
    expect(retryAfterMs('1.5x', 0)).toBeUndefined();
    expect(retryAfterMs('x12', 0)).toBeUndefined();
    expect(retryAfterMs('12x', 0)).toBeUndefined();
  });

  it('a call within an invocation is a child of its trace: same trace id and flags, a span id of its own', () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    const child = childTraceparent(parent);
    expect(child).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
    expect(child).not.toBe(parent);
    expect(childTraceparent(parent)).not.toBe(child);
  });

  it('starts a new trace when the parent is missing or unusable (an all-zero trace id is invalid)', () => {
    for (const parent of [undefined, '', 'garbage', '00-00000000000000000000000000000000-b7ad6b7169203331-01']) {
      const child = childTraceparent(parent);
      expect(child).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(child).not.toContain('00000000000000000000000000000000');
    }
  });
});
