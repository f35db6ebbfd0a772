import { contentOf, keyOf, readReceivedMessage } from '../consumer/index.js';
import type { ReceivedMessage } from '../consumer/index.js';
import { PermanentMessageError, fingerprintPayload } from '../idempotency/index.js';
import type { DedupKey } from '../idempotency/index.js';
import { refusingUnreadable } from '../servicebus/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import { describeIssues, orderMessageTypes, schemaByType } from './schemas.js';
import type { OrderMessageType, OrderPlaced, OrderStatusChanged, PaymentReceived } from './schemas.js';

export type OrderMessage =
  | { readonly type: 'OrderPlaced'; readonly payload: OrderPlaced }
  | { readonly type: 'PaymentReceived'; readonly payload: PaymentReceived }
  | { readonly type: 'OrderStatusChanged'; readonly payload: OrderStatusChanged };

export type ParsedOrderMessage = OrderMessage & {
  readonly key: DedupKey;
  /**
   * Of `{ type, payload }` with the payload as received: the form stored on markers, orders and
   * parked items. Instances of the previous release, which run beside this one during a deploy,
   * compare only this form, so this release still stores it (the next one can store the validated form).
   */
  readonly fingerprint: string;
  /**
   * Only when the body carried fields the schema ignores: the fingerprint of the validated payload,
   * which comparisons accept too (a copy rebuilt from a stored payload, as an operator's resubmit of
   * an older parked item is, is the same request), and the body as received, which parking keeps so
   * a resubmit sends exactly what came.
   */
  readonly validatedFingerprint?: string;
  readonly receivedPayload?: unknown;
  readonly messageId?: string;
  /** The invocation's trace context (the envelope's), for the events this message causes. */
  readonly traceparent?: string;
};

export interface ParseOptions {
  readonly consumerName?: string;
  readonly maxMessageBytes: number;
}

/**
 * Everything about a message that needs no I/O: its JSON body, its dedup key, its type and its
 * validated payload. Throws `PermanentMessageError` for anything no redelivery can fix.
 */
export function parseOrderMessage(envelope: MessageEnvelope, body: unknown, options: ParseOptions): ParsedOrderMessage {
  return parseReceivedOrderMessage(readReceivedMessage(envelope, body, options.maxMessageBytes), options.consumerName);
}

/** The orders consumer's parse, from the delivery the pipeline read once (bounded: property names, depth, size). */
export function parseReceivedOrderMessage(message: ReceivedMessage, consumerName: string | undefined): ParsedOrderMessage {
  return refusingUnreadable(() => parseOrderContent(message, consumerName));
}

/** Key, type, validate, and only then walk the payload to fingerprint it. */
function parseOrderContent(received: ReceivedMessage, consumerName: string | undefined): ParsedOrderMessage {
  const { envelope } = received;
  const { cloudEvent, payload } = contentOf(received);
  const key = keyOf(envelope, cloudEvent, consumerName);
  if (!key) {
    throw new PermanentMessageError('NoDedupKey', 'the message has no idempotency-key property, CloudEvents source and id, or MessageId');
  }
  const type = resolveMessageType(envelope.subject, cloudEvent?.type, payload, key.value);
  // Validate first, then fingerprint: the body as received (the stored form) and the payload as
  // validated (accepted in every comparison).
  const message = validatePayload(type, payload, key.value);
  const fingerprint = fingerprintPayload(type, payload);
  const validatedFingerprint = fingerprintPayload(type, message.payload);
  const validated = validatedFingerprint === fingerprint ? {} : { validatedFingerprint, receivedPayload: payload };
  const base = { key, fingerprint, ...validated, messageId: envelope.messageId, ...(envelope.traceparent ? { traceparent: envelope.traceparent } : {}) };
  return { ...base, ...message } as ParsedOrderMessage;
}

/** Subject first, then the CloudEvents type's last dot-separated segment, then a `type` field. */
export function resolveMessageType(subject: string | undefined, cloudEventType: string | undefined, payload: unknown, dedupKey?: string): OrderMessageType {
  const fromBody = typeof payload === 'object' && payload !== null ? (payload as { type?: unknown }).type : undefined;
  const candidate = subject ?? cloudEventType?.split('.').pop() ?? (typeof fromBody === 'string' ? fromBody : undefined);
  if (candidate === undefined) {
    throw new PermanentMessageError('UnknownMessageType', 'the message has no subject, CloudEvents type or type field', dedupKey);
  }
  if (!(orderMessageTypes as readonly string[]).includes(candidate)) {
    throw new PermanentMessageError('UnknownMessageType', `type ${JSON.stringify(candidate)} is not one of ${orderMessageTypes.join(', ')}`, dedupKey);
  }
  return candidate as OrderMessageType;
}

function validatePayload(type: OrderMessageType, payload: unknown, dedupKey: string): OrderMessage {
  const result = schemaByType[type].safeParse(payload);
  if (!result.success) {
    throw new PermanentMessageError('SchemaViolation', `${type}: ${describeIssues(result.error)}`, dedupKey);
  }
  return { type, payload: result.data } as OrderMessage;
}
