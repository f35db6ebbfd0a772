/**
 * Two retry layers for failures that heal with time (throttling, an outage, a message that came
 * before the one it depends on), so that a valid message never spends its deliveries in seconds:
 *
 *   delivery ──► in-invocation retries ──► delayed retry: a copy scheduled for later ──► … ──► budget spent
 *                (backoff with jitter,       (growing, capped delays; the original          (dead-letter path,
 *                 seconds, inside the lock)   completes only once the copy is accepted)      RetryBudgetExhausted)
 *
 * maxDeliveryCount stays the backstop for crashes only.
 */
export interface RetryPolicy {
  /** How long one invocation keeps retrying before it hands the message to the delayed layer. */
  readonly inInvocationMs: number;
  /** The first delayed retry's delay; each later one doubles, up to `maxDelayMs`. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** From the first failure: past this, the message takes the dead-letter path. */
  readonly budgetMs: number;
}

/** Pause before in-invocation retry `attempt` (1-based): exponential from 100 ms, capped at 2 s, full jitter. */
export function inInvocationPauseMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(2_000, 100 * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling) + 1;
}

/** Delay of delayed retry `attempt` (1-based): doubling from the first delay, capped. Deterministic. */
export function delayedRetryDelayMs(attempt: number, policy: Pick<RetryPolicy, 'firstDelayMs' | 'maxDelayMs'>): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, attempt - 1));
}

export type DelayedRetryDecision =
  | { readonly kind: 'schedule'; readonly attempt: number; readonly enqueueAtEpochMs: number }
  | { readonly kind: 'budget-exhausted'; readonly attempts: number; readonly firstFailureAtEpochMs: number };

/**
 * What to do with a message that is still failing after its in-invocation retries: schedule copy
 * `attempt` (the one it carries plus one), unless the copy would be due after the budget ends.
 */
export function decideDelayedRetry(previousAttempts: number, firstFailureAtEpochMs: number, nowEpochMs: number, policy: RetryPolicy): DelayedRetryDecision {
  const attempt = previousAttempts + 1;
  const enqueueAtEpochMs = nowEpochMs + delayedRetryDelayMs(attempt, policy);
  if (enqueueAtEpochMs - firstFailureAtEpochMs > policy.budgetMs) return { kind: 'budget-exhausted', attempts: previousAttempts, firstFailureAtEpochMs };
  return { kind: 'schedule', attempt, enqueueAtEpochMs };
}
