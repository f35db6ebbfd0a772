import { PermanentMessageError, decideDelayedRetry } from '../idempotency/index.js';
import type { ProcessingOutcome, RetryPolicy } from '../idempotency/index.js';
import { applicationProperty, deriveMessageId, earliestInstant, firstEnqueuedAtProperty } from '../servicebus/index.js';
import type { MessageEnvelope, RetryScheduler, ScheduledCopy } from '../servicebus/index.js';
import { dedupKeyOf, idempotencyKeyProperty } from './parseOrderMessage.js';

/** Application properties a delayed-retry copy carries, so each round knows where it stands. */
export const retryProperties = {
  attempt: 'retry-attempt',
  firstFailureAt: 'retry-first-failure-at',
  lastError: 'retry-last-error',
  of: 'retry-of',
} as const;

/**
 * Hands a message that is still failing after its in-invocation retries to the delayed layer:
 * a copy scheduled for later, with a deterministic MessageId (`<original>~retry-<n>`, hashed when that
 * would exceed Service Bus's limit: a crash and a second scheduling of the same round is dropped by
 * duplicate detection), the original dedup key
 * in `idempotency-key` (whichever copy arrives second is a duplicate) and the round's count. The
 * original is completed only once the copy is accepted. Past the budget: the dead-letter path.
 */
export async function scheduleDelayedRetry(
  envelope: MessageEnvelope,
  body: unknown,
  failure: Extract<ProcessingOutcome, { kind: 'retry' }>,
  ctx: { readonly scheduler: RetryScheduler; readonly policy: RetryPolicy; readonly now: () => Date; readonly failedAtEpochMs: number },
): Promise<ProcessingOutcome> {
  const state = retryStateOf(envelope);
  const now = ctx.now().getTime();
  // When this delivery first failed, before its in-invocation retries; a copy carries the first round's.
  const firstFailureAt = state.firstFailureAtEpochMs ?? ctx.failedAtEpochMs;
  const decision = decideDelayedRetry(state.attempt, firstFailureAt, now, ctx.policy);
  const key = dedupKeyOf(envelope, body);
  if (decision.kind === 'budget-exhausted') {
    const since = new Date(firstFailureAt).toISOString();
    // Not "still failing": an attempt whose answer was lost (a store timeout) may have committed,
    // so the effect may be there. A resubmit is absorbed only while its marker lives.
    const description =
      `gave up after ${decision.attempts} delayed retries since ${since}; the effect may have been written (an attempt whose answer was lost, ` +
      `such as a store timeout, may have committed it: check the store before resubmitting); last error: ${failure.reason}`;
    return { kind: 'invalid', error: new PermanentMessageError('RetryBudgetExhausted', description, key) };
  }
  const root = text(applicationProperty(envelope, retryProperties.of)) ?? envelope.messageId;
  if (root === undefined || key === undefined) return failure; // nothing stable to name the copy by: let Service Bus redeliver
  const copy: ScheduledCopy = {
    messageId: deriveMessageId(root, `~retry-${decision.attempt}`),
    body: copyBody(body),
    subject: envelope.subject,
    contentType: envelope.contentType,
    correlationId: envelope.correlationId,
    applicationProperties: {
      ...primitives(envelope.applicationProperties),
      [idempotencyKeyProperty]: key,
      [retryProperties.attempt]: decision.attempt,
      [retryProperties.firstFailureAt]: new Date(firstFailureAt).toISOString(),
      [retryProperties.lastError]: failure.reason.slice(0, 500),
      [retryProperties.of]: root,
      ...lineageOf(envelope),
    },
  };
  const enqueueAt = new Date(decision.enqueueAtEpochMs);
  try {
    await ctx.scheduler.schedule(copy, enqueueAt);
  } catch (error) {
    return { ...failure, reason: `${failure.reason}; scheduling a delayed retry failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  return { kind: 'rescheduled', attempt: decision.attempt, copyMessageId: copy.messageId, enqueueAt: enqueueAt.toISOString(), reason: failure.reason };
}

function retryStateOf(envelope: MessageEnvelope): { attempt: number; firstFailureAtEpochMs?: number } {
  const attempt = Number(applicationProperty(envelope, retryProperties.attempt) ?? 0);
  // Stryker disable next-line StringLiteral: any text that is not a time parses to NaN, as '' does
  const first = Date.parse(String(applicationProperty(envelope, retryProperties.firstFailureAt) ?? ''));
  // Stryker disable next-line EqualityOperator: at 0 both branches give 0
  return { attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 0, firstFailureAtEpochMs: Number.isNaN(first) ? undefined : first };
}

/** The host hands JSON bodies over parsed: the copy carries them as JSON text again. */
function copyBody(body: unknown): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return JSON.stringify(body) ?? '';
}

function primitives(properties: Readonly<Record<string, unknown>>): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(properties).filter((e): e is [string, string | number | boolean] => ['string', 'number', 'boolean'].includes(typeof e[1])));
}

/** The copy is a new message with its own enqueued time: it carries the time its lineage was first sent. */
function lineageOf(envelope: MessageEnvelope): Record<string, string> {
  const first = earliestInstant([applicationProperty(envelope, firstEnqueuedAtProperty), envelope.enqueuedTimeUtc]);
  return first === undefined ? {} : { [firstEnqueuedAtProperty]: new Date(first).toISOString() };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
