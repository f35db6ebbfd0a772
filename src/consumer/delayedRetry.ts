import { createHash } from 'node:crypto';
import { PermanentMessageError, decideDelayedRetry } from '../idempotency/index.js';
import type { ProcessingOutcome, RetryPolicy } from '../idempotency/index.js';
import { applicationProperty, deriveMessageId, earliestInstant, firstEnqueuedAtProperty } from '../servicebus/index.js';
import type { MessageEnvelope, RetryScheduler, ScheduledCopy } from '../servicebus/index.js';
import { idempotencyKeyProperty } from './messageKey.js';
import type { ReceivedMessage } from './receivedMessage.js';
import { readRetryState, retryProperties, signRetryState } from './retryState.js';

/**
 * Hands a message that is still failing after its in-invocation retries to the delayed layer:
 * a copy scheduled for later, the original dedup key in `idempotency-key` (whichever copy arrives
 * second is a duplicate) and the round's state, signed (`retry-signature`): a state that does not
 * verify is a first attempt (retryState.ts). The copy's MessageId is an HMAC of this delivery's
 * MessageId, sequence number (a digest of its body when the body named one: deliveryName) and the
 * round: the same on a second scheduling of the same round (a crash between schedule and complete;
 * duplicate detection drops it), unknowable to a sender, and never derived from a property a sender
 * could set. The original is completed only once the copy is accepted. Past the budget: the
 * dead-letter path.
 */
export async function scheduleDelayedRetry(
  message: ReceivedMessage,
  failure: Extract<ProcessingOutcome, { kind: 'retry' }>,
  ctx: {
    readonly scheduler: RetryScheduler;
    readonly policy: RetryPolicy;
    readonly now: () => Date;
    readonly failedAtEpochMs: number;
    readonly signingKey: string;
    readonly previousSigningKey?: string;
  },
): Promise<ProcessingOutcome> {
  const { envelope, body } = message;
  const now = ctx.now().getTime();
  const key = message.retryKey();
  const state = readRetryState(envelope, key, { current: ctx.signingKey, previous: ctx.previousSigningKey }, now);
  // When this delivery first failed, before its in-invocation retries; a copy carries the first round's.
  const firstFailureAt = state.firstFailureAtEpochMs ?? ctx.failedAtEpochMs;
  const decision = decideDelayedRetry(state.attempt, firstFailureAt, now, ctx.policy);
  const reason = state.unverified === undefined ? failure.reason : `${failure.reason}; ${state.unverified}`;
  if (decision.kind === 'budget-exhausted') {
    const since = new Date(firstFailureAt).toISOString();
    // Not "still failing": an attempt whose answer was lost (a store timeout) may have committed,
    // so the effect may be there. A resubmit is absorbed only while its marker lives.
    const description =
      `gave up after ${decision.attempts} delayed retries since ${since}; the effect may have been written (an attempt whose answer was lost, ` +
      `such as a store timeout, may have committed it: check the store before resubmitting); last error: ${failure.reason}`;
    return { kind: 'invalid', error: new PermanentMessageError('RetryBudgetExhausted', description, key) };
  }
  const root = state.root ?? envelope.messageId;
  if (root === undefined || key === undefined || envelope.messageId === undefined) return failure; // nothing stable to name the copy by: let Service Bus redeliver
  const suffix = `~retry-${decision.attempt}`;
  const messageId = deriveMessageId(`${envelope.messageId}#${deliveryName(envelope, body)}`, suffix, { secret: ctx.signingKey });
  const next = { attempt: decision.attempt, firstFailureAtEpochMs: firstFailureAt, root };
  const copy: ScheduledCopy = {
    messageId,
    body: copyBody(body),
    subject: envelope.subject,
    contentType: envelope.contentType,
    correlationId: envelope.correlationId,
    applicationProperties: {
      ...primitives(envelope.applicationProperties, ours),
      [idempotencyKeyProperty]: key,
      [retryProperties.attempt]: next.attempt,
      [retryProperties.firstFailureAt]: new Date(next.firstFailureAtEpochMs).toISOString(),
      [retryProperties.lastError]: failure.reason.slice(0, 500),
      [retryProperties.of]: root,
      ...lineageOf(envelope),
      [retryProperties.signature]: signRetryState(ctx.signingKey, { messageId, dedupKey: key }, next),
    },
  };
  const enqueueAt = new Date(decision.enqueueAtEpochMs);
  try {
    await ctx.scheduler.schedule(copy, enqueueAt);
  } catch (error) {
    return { ...failure, reason: `${failure.reason}; scheduling a delayed retry failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  return { kind: 'rescheduled', attempt: decision.attempt, copyMessageId: copy.messageId, enqueueAt: enqueueAt.toISOString(), reason };
}

/**
 * What tells this broker message from another under the same MessageId: its sequence number, or,
 * when that is unknown (the body named one, which the host wrote over the broker's), a digest of
 * its body: the same body again is the same request, and its copy may well be dropped as a duplicate.
 */
function deliveryName(envelope: MessageEnvelope, body: unknown): string {
  if (envelope.sequenceNumber !== undefined) return String(envelope.sequenceNumber);
  return `body:${createHash('sha256').update(copyBody(body)).digest('hex')}`;
}

/** The host hands JSON bodies over parsed: the copy carries them as JSON text again. */
function copyBody(body: unknown): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return JSON.stringify(body) ?? '';
}

/** The message's own properties, less any spelling of the ones the copy sets itself. */
function primitives(properties: Readonly<Record<string, unknown>>, ours: readonly string[]): Record<string, string | number | boolean> {
  return Object.fromEntries(
    Object.entries(properties).filter(
      (e): e is [string, string | number | boolean] => ['string', 'number', 'boolean'].includes(typeof e[1]) && !ours.includes(e[0].toLowerCase()),
    ),
  );
}

/** The copy is a new message with its own enqueued time: it carries the time its lineage was first sent. */
function lineageOf(envelope: MessageEnvelope): Record<string, string> {
  const first = earliestInstant([applicationProperty(envelope, firstEnqueuedAtProperty), envelope.enqueuedTimeUtc]);
  return first === undefined ? {} : { [firstEnqueuedAtProperty]: new Date(first).toISOString() };
}

const ours: readonly string[] = [idempotencyKeyProperty, firstEnqueuedAtProperty, ...Object.values(retryProperties)];
