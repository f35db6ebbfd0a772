/**
 * The key as the IETF Idempotency-Key draft sends it: a Structured Field sf-string, quoted, with
 * `\` and `"` escaped. An sf-string holds printable ASCII only, so anything else is percent-encoded
 * (the same key always gives the same header, which is all the carrier needs).
 */
export function idempotencyKeyHeader(key: string): string {
  const ascii = key.replace(/[^\x20-\x7e]/gu, (ch) => encodeURIComponent(ch));
  return `"${ascii.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;
}

/** The key as the carrier stores it, for a look-up in the query string. */
export function idempotencyKeyValue(key: string): string {
  return key.replace(/[^\x20-\x7e]/gu, (ch) => encodeURIComponent(ch));
}

/** Retry-After in seconds or as an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
