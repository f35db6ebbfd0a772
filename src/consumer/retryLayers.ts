import { inInvocationPauseMs } from '../idempotency/index.js';
import type { PermanentMessageError, ProcessingOutcome, RetryPolicy } from '../idempotency/index.js';
import type { RetryScheduler } from '../servicebus/index.js';
import { realSleep } from './consumerRuntime.js';
import { scheduleDelayedRetry } from './delayedRetry.js';
import type { ReceivedMessage } from './receivedMessage.js';

export interface RetryLayers {
  /** Without it, a failure is handed straight back to Service Bus. */
  readonly retry?: RetryPolicy;
  /** Sends delayed-retry copies; without it, a failure past the in-invocation retries is handed back. */
  readonly scheduler?: RetryScheduler;
  /** Signs the retry state a copy carries and keys its MessageId (RETRY_STATE_SIGNING_KEY); a scheduler needs it. */
  readonly retryStateKey?: string;
  /** Also accepted when verifying (RETRY_STATE_SIGNING_KEY_PREVIOUS), never used to sign: a rotation keeps budgets running. */
  readonly retryStatePreviousKey?: string;
  readonly now: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * A failure that heals with time is retried here for seconds, then as a delayed copy: never by
 * spending deliveries. `exhausted` turns a spent retry budget into the caller's rejection.
 */
export async function decideWithRetryLayers<R extends { readonly outcome: ProcessingOutcome }>(
  message: ReceivedMessage,
  decide: () => Promise<R>,
  layers: RetryLayers,
  exhausted: (known: Omit<R, 'outcome'>, error: PermanentMessageError) => Promise<R>,
): Promise<R> {
  const { retry, scheduler } = layers;
  let result = await decide();
  if (!retry) return result;
  const sleep = layers.sleep ?? realSleep;
  const clock = () => layers.now().getTime();
  const failedAt = clock();
  const deadline = failedAt + retry.inInvocationMs;
  for (let attempt = 1; result.outcome.kind === 'retry' && clock() < deadline; attempt += 1) {
    await sleep(Math.min(inInvocationPauseMs(attempt), Math.max(0, deadline - clock())));
    result = await decide();
  }
  if (result.outcome.kind !== 'retry' || !scheduler) return result;
  if (layers.retryStateKey === undefined) {
    // Settings refuse to start without the key when delayed retries are on; a wiring without it falls back to redelivery.
    return { ...result, outcome: { ...result.outcome, reason: `${result.outcome.reason}; no delayed retry: the retry state signing key is missing` } };
  }
  const outcome = await scheduleDelayedRetry(message, result.outcome, {
    scheduler,
    policy: retry,
    now: layers.now,
    failedAtEpochMs: failedAt,
    signingKey: layers.retryStateKey,
    previousSigningKey: layers.retryStatePreviousKey,
  });
  const { outcome: _failure, ...known } = result;
  if (outcome.kind === 'invalid') return exhausted(known, outcome.error);
  return { ...result, outcome };
}
