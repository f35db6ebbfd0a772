import { PermanentMessageError } from '../idempotency/index.js';
import type { DocumentStore } from '../idempotency/index.js';
import { inboxMarkerId, orderDocumentId, parseOrderMessage, rejectedMessagesPartition, rejectionDocumentId } from '../orders/index.js';
import type { OrderDocument, ParsedOrderMessage, RejectionDocument } from '../orders/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';

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
  const rejection = envelope.messageId === undefined ? undefined : await store.read<RejectionDocument>(rejectedMessagesPartition, rejectionDocumentId(envelope.messageId, options.consumerName));
  if (rejection) {
    const { reason, description } = rejection.document;
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

async function effectState(message: ParsedOrderMessage, store: DocumentStore): Promise<StoreState> {
  const orderId = message.payload.orderId;
  const order = await store.read<OrderDocument>(orderId, orderDocumentId(orderId));
  switch (message.type) {
    case 'OrderPlaced':
      if (!order) return { kind: 'not-processed', detail: `order ${orderId} is not stored` };
      return order.document.fingerprint === message.fingerprint
        ? { kind: 'processed', detail: `order ${orderId} was created by message ${order.document.messageId ?? '?'}` }
        : { kind: 'conflict', detail: `order ${orderId} holds a different payload (message ${order.document.messageId ?? '?'})` };
    case 'PaymentReceived': {
      const marker = await store.read<{ id: string; fingerprint: string; processedAt: string }>(orderId, inboxMarkerId(message.key.value));
      if (marker) {
        return marker.document.fingerprint === message.fingerprint
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
