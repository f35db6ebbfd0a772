import { PermanentMessageError, resolveDedupKey } from '../idempotency/index.js';
import type { DedupKey } from '../idempotency/index.js';
import { applicationProperty, decodeJsonBody, unwrapCloudEvent } from '../servicebus/index.js';
import type { CloudEventAttributes, MessageEnvelope } from '../servicebus/index.js';

/** The property a producer or our dead-letter tool sets to pin the dedup key across MessageIds. */
export const idempotencyKeyProperty = 'idempotency-key';

/**
 * The dedup key the consumer derives for a message, without validating it: what an operator tool
 * needs to find the message's records, or to pin the key on a resubmitted copy. Undefined when the
 * message has none.
 */
export function dedupKeyOf(envelope: MessageEnvelope, body: unknown, consumerName?: string): string | undefined {
  let cloudEvent: CloudEventAttributes | undefined;
  try {
    cloudEvent = unwrapCloudEvent(envelope, decodeJsonBody(body, Number.MAX_SAFE_INTEGER)).cloudEvent;
  } catch {
    cloudEvent = undefined; // an unreadable body still has its MessageId or idempotency-key
  }
  return usableKeyOf(envelope, cloudEvent, consumerName);
}

/** The key's value by the key rule (keyOf), or undefined when there is none: a declared key that is unusable is no key here. */
export function usableKeyOf(envelope: MessageEnvelope, cloudEvent: CloudEventAttributes | undefined, consumerName?: string): string | undefined {
  try {
    return keyOf(envelope, cloudEvent, consumerName)?.value;
  } catch (error) {
    if (error instanceof PermanentMessageError) return undefined;
    throw error;
  }
}

/** The key rule every consumer of this project applies: `idempotency-key`, then CloudEvents source + id, then MessageId. */
export function keyOf(envelope: MessageEnvelope, cloudEvent: CloudEventAttributes | undefined, consumerName?: string): DedupKey | undefined {
  return resolveDedupKey(
    {
      idempotencyKey: keyText(applicationProperty(envelope, idempotencyKeyProperty)),
      cloudEvent: cloudEvent && { id: cloudEvent.id, source: cloudEvent.source },
      messageId: envelope.messageId,
    },
    consumerName,
  );
}

/** A numeric key (a producer that sends an integer id) is its decimal text; anything else is judged as it is. */
function keyText(value: unknown): unknown {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return value;
}
