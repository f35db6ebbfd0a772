import { PermanentMessageError } from '../idempotency/index.js';
import type { DocumentStore } from '../idempotency/index.js';
import { conflictDocumentId, findRejectionRecord, inboxMarkerId, isSameRequest, orderDocumentId, parseOrderMessage } from '../orders/index.js';
import type { ConflictDocument, InboxMarkerDocument, OrderDocument, ParsedOrderMessage, RejectionDocument } from '../orders/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import { payloadDifferences } from './payloadDifference.js';
import type { FieldDifference } from './payloadDifference.js';

/**
 * What the store says about a dead-lettered message, so an operator sees which resubmits would be
 * no-ops: `processed` (its effect is there: a resubmit is absorbed as a duplicate), `conflict` (its
 * key holds another payload), `invalid` (it can never be processed as it is), `not-processed` (a
 * transient failure: a resubmit will apply it), or `unchecked` (no store configured).
 */
export type StoreStateKind = 'processed' | 'conflict' | 'invalid' | 'not-processed' | 'unchecked';

export interface StoreState {
  readonly kind: StoreStateKind;
  readonly detail: string;
}

export interface StoreLookupOptions {
  readonly store?: DocumentStore;
  readonly consumerName?: string;
}

export async function storeStateOf(envelope: MessageEnvelope, body: unknown, options: StoreLookupOptions): Promise<StoreState> {
  const { store } = options;
  if (!store) return { kind: 'unchecked', detail: 'no Cosmos DB given (--cosmos-endpoint)' };
  const rejection = await rejectionOf(envelope, body, options);
  // A transient failure that outlasted the retry budget: what counts is whether its effect is there now.
  if (rejection && rejection.reason !== 'RetryBudgetExhausted') {
    const { reason, description } = rejection;
    return { kind: reason === 'PayloadConflict' ? 'conflict' : 'invalid', detail: `${reason}: ${description}` };
  }
  let message: ParsedOrderMessage;
  try {
    message = parseOrderMessage(envelope, body, { consumerName: options.consumerName, maxMessageBytes: Number.MAX_SAFE_INTEGER });
  } catch (error) {
    if (error instanceof PermanentMessageError) return { kind: 'invalid', detail: error.message };
    throw error;
  }
  return effectState(message, store);
}

/** The rejection recorded for the message: by MessageId, in `#rejected-<n>` (n from the MessageId; the previous release's `#rejected` too) or, for a conflict, in its order's partition. */
async function rejectionOf(envelope: MessageEnvelope, body: unknown, options: StoreLookupOptions): Promise<RejectionDocument | undefined> {
  if (!options.store || envelope.messageId === undefined) return undefined;
  let orderId: string | undefined;
  try {
    orderId = parseOrderMessage(envelope, body, { consumerName: options.consumerName, maxMessageBytes: Number.MAX_SAFE_INTEGER }).payload.orderId;
  } catch {
    orderId = undefined; // an invalid message's record is in #rejected-<n>
  }
  return findRejectionRecord(options.store, envelope.messageId, orderId, options.consumerName);
}

async function effectState(message: ParsedOrderMessage, store: DocumentStore): Promise<StoreState> {
  const orderId = message.payload.orderId;
  const order = await store.read<OrderDocument>(orderId, orderDocumentId(orderId));
  switch (message.type) {
    case 'OrderPlaced':
      if (!order) return { kind: 'not-processed', detail: `order ${orderId} is not stored` };
      return isSameRequest(message, order.document.fingerprint)
        ? { kind: 'processed', detail: `order ${orderId} was created by message ${order.document.messageId ?? '?'}` }
        : { kind: 'conflict', detail: `order ${orderId} holds a different payload (message ${order.document.messageId ?? '?'})` };
    case 'PaymentReceived': {
      const marker = await store.read<{ id: string; fingerprint: string; processedAt: string }>(orderId, inboxMarkerId(message.key.value));
      if (marker) {
        return isSameRequest(message, marker.document.fingerprint)
          ? { kind: 'processed', detail: `payment applied at ${marker.document.processedAt}` }
          : { kind: 'conflict', detail: `key ${message.key.value} was applied with a different payload` };
      }
      return { kind: 'not-processed', detail: order ? 'payment not applied' : `payment not applied; order ${orderId} is not stored` };
    }
    case 'OrderStatusChanged':
      if (!order) return { kind: 'not-processed', detail: `order ${orderId} is not stored` };
      return order.document.statusVersion >= message.payload.version
        ? { kind: 'processed', detail: `order is at status version ${order.document.statusVersion}` }
        : { kind: 'not-processed', detail: `order is at status version ${order.document.statusVersion}` };
  }
}

/** What the store holds for a message, for `show`: the record its key reaches, and how they differ. */
export interface StoredRecords {
  readonly rejection?: RejectionDocument;
  /** The document the message's key or order id reaches (order, or inbox marker), if any. */
  readonly target?: { readonly id: string; readonly document: unknown };
  readonly fingerprints?: { readonly message: string; readonly stored?: string };
  /** Field by field, the message's payload against the stored one. */
  readonly differences?: FieldDifference[];
  readonly conflict?: ConflictDocument;
  readonly note?: string;
}

export async function storedRecordsOf(envelope: MessageEnvelope, body: unknown, options: StoreLookupOptions): Promise<StoredRecords | undefined> {
  const { store } = options;
  if (!store) return undefined;
  const rejection = await rejectionOf(envelope, body, options);
  let message: ParsedOrderMessage;
  try {
    message = parseOrderMessage(envelope, body, { consumerName: options.consumerName, maxMessageBytes: Number.MAX_SAFE_INTEGER });
  } catch (error) {
    if (error instanceof PermanentMessageError) return { rejection, note: `the message cannot be parsed, so it reaches no record: ${error.message}` };
    throw error;
  }
  const orderId = message.payload.orderId;
  const conflict = (await store.read<ConflictDocument>(orderId, conflictDocumentId(message.key.value, message.fingerprint)))?.document;
  const target = await targetOf(message, store);
  if (!target) return { rejection, conflict, fingerprints: { message: message.fingerprint }, note: "nothing is stored under this message's key" };
  return {
    rejection,
    conflict,
    target: { id: target.id, document: target.document },
    fingerprints: { message: message.fingerprint, stored: target.fingerprint },
    differences: target.comparable === undefined ? undefined : payloadDifferences(message.payload, target.comparable),
    note: target.comparable === undefined ? 'the stored record keeps only the fingerprint of what it applied' : undefined,
  };
}

interface TargetRecord {
  readonly id: string;
  readonly document: unknown;
  readonly fingerprint?: string;
  /** The stored side in the message's own shape, where the store keeps enough to rebuild it. */
  readonly comparable?: unknown;
}

async function targetOf(message: ParsedOrderMessage, store: DocumentStore): Promise<TargetRecord | undefined> {
  const orderId = message.payload.orderId;
  if (message.type === 'PaymentReceived') {
    const id = inboxMarkerId(message.key.value);
    const marker = (await store.read<InboxMarkerDocument>(orderId, id))?.document;
    return marker && { id, document: marker, fingerprint: marker.fingerprint, comparable: marker.payload };
  }
  const order = (await store.read<OrderDocument>(orderId, orderDocumentId(orderId)))?.document;
  if (!order) return undefined;
  const comparable =
    message.type === 'OrderPlaced'
      ? { orderId: order.orderId, customerId: order.customerId, currency: order.currency, lines: order.lines, placedAt: order.placedAt }
      : { orderId: order.orderId, status: order.status, version: order.statusVersion, ...(order.statusChangedAt ? { changedAt: order.statusChangedAt } : {}) };
  return { id: order.id, document: order, fingerprint: message.type === 'OrderPlaced' ? order.fingerprint : undefined, comparable };
}
