import { randomBytes } from 'node:crypto';
import type { ServiceBusMessage, ServiceBusReceivedMessage } from '@azure/service-bus';
import { idempotencyKeyProperty, retryProperties } from '../orders/index.js';
import { dataBodyBytes, deriveMessageId, firstEnqueuedAtProperty } from '../servicebus/index.js';
import type { ResubmitHorizonDecision } from './resubmitHorizon.js';

export const resubmittedFromProperty = 'resubmitted-from';
export const resubmitCountProperty = 'resubmit-count';
/** Why an operator sent a copy the retention check refused (`--force <reason>`). */
export const resubmitForcedReasonProperty = 'resubmit-forced-reason';

export interface ResubmitPlan {
  readonly copy: ServiceBusMessage;
  /** Why the copy keeps or changes the MessageId, for the report. */
  readonly messageIdDecision: 'kept' | 'new';
}

export interface ResubmitOptions {
  readonly entityPath: string;
  /**
   * The subscription a copy sent to a topic is for: its `to`. The subscriptions' rules in
   * infra/servicebus-queues.json deliver an addressed message to that subscription only.
   */
  readonly to?: string;
  /** The queue's duplicate-detection window; 0 when it has none. */
  readonly duplicateDetectionWindowMs: number;
  /** The dedup key the consumer derives from the original (without any consumer prefix). */
  readonly dedupKey?: string;
  /** The retention check's verdict for this message (a refused one is never planned). */
  readonly horizon?: Exclude<ResubmitHorizonDecision, { kind: 'refused' }>;
  /** The unguessable part of a new MessageId (copyNonce()); drawn here when not given. */
  readonly nonce?: string;
}

/** 48 random bits: no sender can send a message under a copy's MessageId before the copy goes. */
export function copyNonce(): string {
  return randomBytes(6).toString('hex');
}

/**
 * The copy that goes back to the queue: body, content type, subject, correlation id and application
 * properties as they were, the DeadLetter* and delayed-retry (`retry-*`, the `retry-signature` included) properties dropped, `resubmitted-from` and a resubmit
 * count added. On a queue that detects duplicates the copy gets a new MessageId, the original's
 * with `~resubmit-<count>-<nonce>`, and carries the original dedup key in `idempotency-key`: the
 * broker silently drops a message whose MessageId it saw inside the window, from any sender, so a
 * kept MessageId (another message may have used it since) or a predictable one (a sender may send it
 * first) would lose the copy while the tool removes the original. Two attempts at one resubmit
 * (the first died before removing the original) send two copies under one key: the consumer
 * applies one. Without duplicate detection the MessageId is kept.
 */
export function planResubmit(original: ServiceBusReceivedMessage, options: ResubmitOptions): ResubmitPlan {
  const { DeadLetterReason: _reason, DeadLetterErrorDescription: _description, ...kept } = original.applicationProperties ?? {};
  // A resubmit starts the delayed retries afresh: the copy must not inherit a spent retry budget.
  const retryNames: readonly string[] = Object.values(retryProperties);
  // The lineage time is written afresh below, from the earliest the tool saw: a copy of it in another case must not linger.
  const rewritten = [...retryNames, firstEnqueuedAtProperty];
  // The consumer refuses two names that differ only by case: another spelling of a name the tool writes goes.
  const written = [resubmittedFromProperty, resubmitCountProperty, resubmitForcedReasonProperty];
  const properties = Object.fromEntries(Object.entries(kept).filter(([name]) => !rewritten.includes(name.toLowerCase()) && !isOtherSpelling(name, written)));
  const previousCount = Number(properties[resubmitCountProperty] ?? 0);
  const count = Number.isFinite(previousCount) ? previousCount + 1 : 1;
  const originalId = original.messageId === undefined ? undefined : String(original.messageId);
  const newId = options.duplicateDetectionWindowMs > 0 || originalId === undefined;
  const applicationProperties: Record<string, string | number | boolean | Date> = {
    ...(properties as Record<string, string | number | boolean | Date>),
    [resubmittedFromProperty]: `${options.entityPath}/$DeadLetterQueue#${String(original.sequenceNumber)}`,
    [resubmitCountProperty]: count,
    ...horizonProperties(options.horizon),
  };
  const key = options.dedupKey ?? originalId;
  if (newId && key !== undefined && applicationProperty(properties, idempotencyKeyProperty) === undefined) {
    applicationProperties[idempotencyKeyProperty] = key;
  }
  const copy: ServiceBusMessage = {
    body: exactBody(original),
    contentType: original.contentType,
    subject: original.subject,
    correlationId: original.correlationId,
    ...(options.to === undefined ? {} : { to: options.to }),
    // A session-enabled subscription or queue takes only messages with a SessionId: the copy keeps the original's.
    ...(original.sessionId === undefined ? {} : { sessionId: original.sessionId }),
    messageId: newId
      ? deriveMessageId(originalId ?? `seq-${String(original.sequenceNumber)}`, `~resubmit-${count}-${options.nonce ?? copyNonce()}`)
      : originalId,
    applicationProperties,
    // Waiting in the queue past this, the copy is dead-lettered (TTLExpiredException) rather than consumed after its markers expired.
    ...(options.horizon?.kind === 'safe' ? { timeToLive: options.horizon.copyTimeToLiveMs } : {}),
  };
  return { copy, messageIdDecision: newId ? 'new' : 'kept' };
}

/** The lineage's first send travels on, so the next resubmit counts from it; a forced send says why. */
function horizonProperties(horizon: ResubmitOptions['horizon']): Record<string, string> {
  const first = horizon?.firstEnqueuedAtEpochMs;
  return {
    ...(first === undefined ? {} : { [firstEnqueuedAtProperty]: new Date(first).toISOString() }),
    ...(horizon?.kind === 'forced' ? { [resubmitForcedReasonProperty]: horizon.reason } : {}),
  };
}

/**
 * A data-section body goes back byte for byte (the SDK's decoded `body` would be re-serialised); a
 * string (an AMQP value section) goes back as its UTF-8 text, which the consumer reads as it read
 * the string: the SDK would send a string as a JSON string literal of it. Other bodies go back as
 * the SDK decoded them.
 */
function exactBody(original: ServiceBusReceivedMessage): unknown {
  const bytes = dataBodyBytes(original);
  if (bytes !== undefined) return Buffer.from(bytes);
  return typeof original.body === 'string' ? Buffer.from(original.body, 'utf8') : original.body;
}

function applicationProperty(properties: Record<string, unknown>, name: string): unknown {
  return Object.entries(properties).find(([k]) => k.toLowerCase() === name)?.[1];
}

/** `name` is one of `names` in another case: kept beside the tool's own spelling, the consumer would refuse the message. */
export function isOtherSpelling(name: string, names: readonly string[]): boolean {
  return names.some((n) => n !== name && n === name.toLowerCase());
}
