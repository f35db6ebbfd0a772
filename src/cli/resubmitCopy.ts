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
  readonly nowMs: number;
  /** The retention check's verdict for this message (a refused one is never planned). */
  readonly horizon?: Exclude<ResubmitHorizonDecision, { kind: 'refused' }>;
}

/**
 * The copy that goes back to the queue: body, content type, subject, correlation id and application
 * properties as they were, the DeadLetter* and delayed-retry (`retry-*`, the `retry-signature` included) properties dropped, `resubmitted-from` and a resubmit
 * count added. When the original's send may still be inside the duplicate-detection window, the
 * broker would silently drop a copy with the same MessageId, so the copy gets a new one, derived
 * from the original and the resubmit count (two attempts at the same resubmit share it, and the
 * broker drops the second), and carries the original dedup key in `idempotency-key`.
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
  const sentAtMs = original.enqueuedTimeUtc?.getTime() ?? options.nowMs;
  const mayBeInWindow = options.duplicateDetectionWindowMs > 0 && options.nowMs - sentAtMs < options.duplicateDetectionWindowMs;
  const originalId = original.messageId === undefined ? undefined : String(original.messageId);
  const newId = mayBeInWindow || originalId === undefined;
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
    messageId: newId ? deriveMessageId(originalId ?? `seq-${String(original.sequenceNumber)}`, `~resubmit-${count}`) : originalId,
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
