import type { PermanentMessageError } from '../idempotency/index.js';
import { decodeJsonBody, refuseAmbiguousPropertyNames, refusingUnreadable, unwrapCloudEvent } from '../servicebus/index.js';
import type { CloudEventAttributes, MessageEnvelope } from '../servicebus/index.js';
import { dedupKeyOf, usableKeyOf } from './messageKey.js';

/** The body as JSON, out of its CloudEvent when it came in one. */
export interface MessageContent {
  readonly cloudEvent?: CloudEventAttributes;
  readonly payload: unknown;
}

/**
 * One delivery, read once at the pipeline's entrance: the body is bounded, decoded and unwrapped
 * here, and every later step (the definition's parse, the delivery history, a delayed-retry copy)
 * uses this reading instead of walking the body again.
 */
export interface ReceivedMessage {
  readonly envelope: MessageEnvelope;
  /** As delivered: a delayed-retry copy sends exactly this again. */
  readonly body: unknown;
  /** The content, or the reason no redelivery can make it readable (thrown by `contentOf`). */
  readonly content: MessageContent | { readonly unreadable: PermanentMessageError };
  /**
   * The message's dedup key without any consumer prefix, as a delayed-retry copy pins it in
   * `idempotency-key` and signs its state over it; undefined when the message has none usable.
   */
  readonly retryKey: () => string | undefined;
}

/** Reads a delivery: ambiguous property names refused, then the body bounded to `maxMessageBytes`, decoded and unwrapped. */
export function readReceivedMessage(envelope: MessageEnvelope, body: unknown, maxMessageBytes: number): ReceivedMessage {
  const content = readContent(envelope, body, maxMessageBytes);
  let key: { readonly value: string | undefined } | undefined;
  const retryKey = (): string | undefined => (key ??= { value: retryKeyOf(envelope, body, content) }).value;
  return { envelope, body, content, retryKey };
}

/** The content, or the permanent error that makes the message unreadable. */
export function contentOf(message: ReceivedMessage): MessageContent {
  if ('unreadable' in message.content) throw message.content.unreadable;
  return message.content;
}

function readContent(envelope: MessageEnvelope, body: unknown, maxMessageBytes: number): ReceivedMessage['content'] {
  try {
    return refusingUnreadable(() => {
      refuseAmbiguousPropertyNames(envelope);
      return unwrapCloudEvent(envelope, decodeJsonBody(body, maxMessageBytes));
    });
  } catch (error) {
    // refusingUnreadable lets nothing else out: whatever the reading threw is an unreadable body.
    return { unreadable: error as PermanentMessageError };
  }
}

function retryKeyOf(envelope: MessageEnvelope, body: unknown, content: ReceivedMessage['content']): string | undefined {
  // Only a message whose body could not be read (its rejection not recorded, so it is retried) is walked again, for what key it has.
  if ('unreadable' in content) return dedupKeyOf(envelope, body);
  return usableKeyOf(envelope, content.cloudEvent);
}
