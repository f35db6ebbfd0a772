import { idempotencyKeyHeader } from '../../src/http/idempotencyKeyHeader.js';

export interface IntakeAnswer {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: unknown;
  /** Attempts beyond the first: after a 409 in progress, a 503, or a connection lost. */
  readonly retries: number;
}

export interface IntakeClientOptions {
  /** The instances to ask, freshly each attempt (an instance may go away): a retry may reach another one. */
  readonly baseUrls: () => readonly string[];
  readonly maxAttempts?: number;
  readonly timeoutMs?: number;
  /** Sent with every attempt: the caller's trace, which the app continues. */
  readonly traceparent?: string;
}

/**
 * A well-behaved client of POST /api/orders, as the README asks clients to be: one key per order,
 * sent again unchanged on every retry; a retry after a lost connection or a timeout (the answer
 * may have been lost after the order was accepted), after a 503, and after 409 request-in-progress,
 * each waiting what Retry-After says. Any other answer is final.
 */
export async function submitOrderOverHttp(idempotencyKey: string, order: unknown, options: IntakeClientOptions, attempt = 0): Promise<IntakeAnswer> {
  const maxAttempts = options.maxAttempts ?? 20;
  const urls = options.baseUrls();
  const base = urls[attempt % Math.max(1, urls.length)];
  let retryAfterMs = 200;
  if (base !== undefined) {
    try {
      const response = await fetch(new URL('api/orders', base), {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Idempotency-Key': idempotencyKeyHeader(idempotencyKey),
          ...(options.traceparent ? { traceparent: options.traceparent } : {}),
        },
        body: JSON.stringify(order),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      const body: unknown = await response.json().catch(() => undefined);
      const inProgress = response.status === 409 && String((body as { type?: unknown } | undefined)?.type ?? '').endsWith(':request-in-progress');
      if (!inProgress && response.status !== 503)
        return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body, retries: attempt };
      retryAfterMs = Number(response.headers.get('retry-after') ?? '1') * 1000;
    } catch {
      // Connection refused or reset, or timed out: whether the order was accepted is unknown; ask again.
    }
  }
  if (attempt + 1 >= maxAttempts) throw new Error(`POST /api/orders for key ${idempotencyKey}: no final answer after ${maxAttempts} attempts`);
  await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
  return submitOrderOverHttp(idempotencyKey, order, options, attempt + 1);
}
