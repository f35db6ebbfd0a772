import type { ServiceBusMessage, ServiceBusReceivedMessage } from '@azure/service-bus';
import { idempotencyKeyProperty, retryProperties } from '../orders/index.js';
import { deriveMessageId } from '../servicebus/index.js';

export const resubmittedFromProperty = 'resubmitted-from';
export const resubmitCountProperty = 'resubmit-count';

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
  const properties = Object.fromEntries(Object.entries(kept).filter(([name]) => !retryNames.includes(name.toLowerCase())));
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
    messageId: newId ? deriveMessageId(originalId ?? `seq-${String(original.sequenceNumber)}`, `~resubmit-${count}`) : originalId,
    applicationProperties,
  };
  return { copy, messageIdDecision: newId ? 'new' : 'kept' };
}

/**
 * A data-section body goes back byte for byte (the SDK's decoded `body` would be re-serialised);
 * other body types go back as the SDK decoded them.
 */
function exactBody(original: ServiceBusReceivedMessage): unknown {
  const raw = original._rawAmqpMessage;
  return raw?.bodyType === 'data' && raw.body instanceof Uint8Array ? Buffer.from(raw.body) : original.body;
}

function applicationProperty(properties: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(properties).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : properties[key];
}
