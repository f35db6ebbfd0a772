export { idempotencyKeyHeader, idempotencyKeyValue } from '../http/index.js';

/** Retry-After in seconds or as an HTTP date, in milliseconds from `nowEpochMs` (the caller's clock); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, nowEpochMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowEpochMs);
}
