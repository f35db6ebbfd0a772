/**
 * A function's retry policy as the worker registers it (`retryOptions`, durations in whole seconds)
 * and as the host applies it to triggers that support one (timer, Event Hubs, Cosmos DB): the
 * invocation is run again with the same input up to `maxRetryCount` times (-1: for ever), then the
 * host gives up on that input and moves on.
 */
export interface RetryPolicy {
  readonly maxRetryCount: number;
  /** The wait before retry number `retry` (1-based). */
  delayMs(retry: number): number;
}

interface RpcDuration {
  readonly seconds?: number;
}

interface RegisteredRetryOptions {
  readonly strategy?: string;
  readonly retryStrategy?: string;
  readonly maxRetryCount?: number;
  readonly delayInterval?: RpcDuration;
  readonly minimumInterval?: RpcDuration;
  readonly maximumInterval?: RpcDuration;
}

export const noRetries: RetryPolicy = { maxRetryCount: 0, delayMs: () => 0 };

export function retryPolicyOf(functionName: string, options: unknown): RetryPolicy {
  if (options === undefined || options === null) return noRetries;
  const o = options as RegisteredRetryOptions;
  const strategy = o.strategy ?? o.retryStrategy;
  const maxRetryCount = o.maxRetryCount ?? 0;
  if (!Number.isInteger(maxRetryCount) || maxRetryCount < -1)
    throw new Error(`${functionName}: retry.maxRetryCount must be -1 or a whole number, not ${maxRetryCount}`);
  const ms = (d: RpcDuration | undefined) => (d?.seconds ?? 0) * 1000;
  if (strategy === 'fixedDelay') return { maxRetryCount, delayMs: () => ms(o.delayInterval) };
  if (strategy === 'exponentialBackoff') {
    const min = ms(o.minimumInterval);
    const max = ms(o.maximumInterval);
    if (max < min) throw new Error(`${functionName}: retry.maximumInterval is shorter than retry.minimumInterval`);
    return { maxRetryCount, delayMs: (retry) => Math.min(max, min * 2 ** (retry - 1)) };
  }
  throw new Error(`${functionName}: retry.strategy must be "fixedDelay" or "exponentialBackoff", not ${JSON.stringify(strategy)}`);
}
