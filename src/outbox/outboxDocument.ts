import { fingerprintPayload } from '../idempotency/index.js';
import { deriveMessageId, maxMessageIdLength } from '../servicebus/index.js';

/**
 * An event waiting to leave the container, written in the same transactional batch as the change
 * that caused it, so the event exists if and only if the change does. It names everything the
 * publisher needs (the entity, and the message to the byte), so one publisher serves every event.
 */
export interface OutboxDocument {
  readonly id: string;
  /** The partition the event was written in (the container's partition key, /orderId). */
  readonly orderId: string;
  readonly docType: 'outbox';
  readonly eventType: string;
  /** A queue or topic name. */
  readonly destination: string;
  readonly message: OutboxMessage;
  readonly causationMessageId?: string;
  readonly createdAt: string;
  readonly state: OutboxState;
  /** Set by the publisher once Service Bus has accepted the message. */
  readonly publishedAt: string | null;
  /** Why the publisher set it aside (state `failed`): an operator decides, `npm run dlq -- outbox`. */
  readonly failure?: { readonly reason: string; readonly detail: string; readonly at: string };
  /** Published events expire; pending and failed ones stay until they are dealt with. */
  readonly ttl?: number;
}

export type OutboxState = 'pending' | 'published' | 'failed';

export interface OutboxMessage {
  /** Stable for the event's whole life: every re-send is the same message to duplicate detection and to consumers. */
  readonly messageId: string;
  readonly subject: string;
  readonly contentType: 'application/json';
  readonly body: unknown;
  /** The order id: a session-enabled subscriber receives one order's events in the order they were written. */
  readonly sessionId?: string;
  readonly correlationId?: string;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
}

export { maxMessageIdLength };

/** Where every event the orders service publishes says it comes from; with `cloudEvents:id` it is the consumers' dedup key. */
export const orderEventsSource = '/idempotent-order-consumer/orders';

export interface NewOutboxEvent {
  readonly id: string;
  readonly orderId: string;
  readonly eventType: string;
  readonly destination: string;
  readonly body: unknown;
  readonly causationMessageId?: string;
  readonly createdAt: string;
  /** A MessageId the event must have (an OrderPlaced's, from `messageIdNamingBody`); else derived from the document id. */
  readonly messageId?: string;
  /** Who the event says it comes from: `orderEventsSource` unless given. */
  readonly source?: string;
  /** The W3C trace context of the invocation that wrote it: sent as `Diagnostic-Id`, its consumer's parent. */
  readonly traceparent?: string;
}

/** The application property the Service Bus SDKs and the Functions host read a message's trace context from. */
const diagnosticIdProperty = 'Diagnostic-Id';

/** Where the HTTP intake's OrderPlaced events say they come from. */
export const orderIntakeSource = '/idempotent-order-consumer/intake';

/**
 * The event as a pending outbox document, its message in CloudEvents binary mode: the attributes as
 * `cloudEvents:*` application properties, the data as the JSON body.
 */
export function newOutboxDocument(event: NewOutboxEvent): OutboxDocument {
  const messageId = event.messageId ?? messageIdFor(event.id);
  return {
    id: event.id,
    orderId: event.orderId,
    docType: 'outbox',
    eventType: event.eventType,
    destination: event.destination,
    message: {
      messageId,
      subject: event.eventType,
      contentType: 'application/json',
      body: event.body,
      sessionId: event.orderId,
      ...(event.causationMessageId === undefined ? {} : { correlationId: event.causationMessageId }),
      applicationProperties: {
        'cloudEvents:specversion': '1.0',
        'cloudEvents:id': messageId,
        'cloudEvents:source': event.source ?? orderEventsSource,
        'cloudEvents:type': event.eventType,
        'cloudEvents:time': event.createdAt,
        'cloudEvents:subject': event.orderId,
        ...(event.traceparent === undefined ? {} : { [diagnosticIdProperty]: event.traceparent }),
      },
    },
    ...(event.causationMessageId === undefined ? {} : { causationMessageId: event.causationMessageId }),
    createdAt: event.createdAt,
    state: 'pending',
    publishedAt: null,
  };
}

/** The document id when Service Bus accepts it as a MessageId, else a digest of it (stable either way). */
export function messageIdFor(documentId: string): string {
  // The digest's prefix is the one earlier releases wrote: stored entries keep their MessageId either way.
  return deriveMessageId(documentId, '', { digestPrefix: 'outbox|*' });
}

/** Hex characters of the body's digest in a MessageId that names it: 128 bits, and room for a hashed origin beside it. */
const bodyDigestLength = 32;

/**
 * `<base>~<digest of the body>`: a MessageId that names the body as well as the event. Service
 * Bus's duplicate detection drops a second message under a MessageId it has seen in its window,
 * whatever its body, and no consumer ever sees it. Where other producers use the same MessageIds
 * (the orders queue, where MessageId = order id is the producers' contract), an event of ours with
 * another body under one of theirs would vanish; with the digest it reaches the consumer and meets
 * its fingerprint check. The digest is the start of the consumer's own fingerprint of the message
 * (type and body), so an operator can match the two. Every re-send of one entry has the same body,
 * hence the same MessageId: the broker still drops those.
 */
export function messageIdNamingBody(base: string, eventType: string, body: unknown): string {
  return deriveMessageId(base, `~${fingerprintPayload(eventType, body).slice(0, bodyDigestLength)}`);
}

/** A document from the change feed is the publisher's business only when it is an outbox entry still to send. */
export function isPendingOutbox(document: Readonly<Record<string, unknown>>): boolean {
  return document.docType === 'outbox' && document.state === 'pending';
}
