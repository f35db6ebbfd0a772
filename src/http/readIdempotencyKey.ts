import { parseIdempotencyKey } from './idempotencyKeyHeader.js';

/** The Idempotency-Key header as read: a key, none, or a value that is not one (with what a client is told). */
export type IdempotencyKeyReading =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed'; readonly title: string; readonly detail: string };

/** Today's rule behind the reader's interface: the draft's sf-string only. */
export function readIdempotencyKey(value: string | null): IdempotencyKeyReading {
  if (value === null || value.trim() === '') return { kind: 'missing' };
  const key = parseIdempotencyKey(value);
  if (key === undefined) return { kind: 'malformed', title: 'Idempotency-Key header malformed', detail: 'the Idempotency-Key must be one non-empty sf-string (RFC 8941)' };
  if (key.length > 255) return { kind: 'malformed', title: 'Idempotency-Key header too long', detail: `the Idempotency-Key is ${key.length} characters; at most 255 are allowed` };
  return { kind: 'key', key };
}
