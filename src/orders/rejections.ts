import { create, replace } from '../idempotency/index.js';
import type { DocumentStore, PermanentMessageError, StoredDocument } from '../idempotency/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import { rejectedMessagesPartition, rejectionDocumentId } from './documents.js';
import type { RejectionDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';

/**
 * The Functions Service Bus trigger cannot dead-letter with a reason: a throw only abandons. So a
 * rejected message is thrown until Service Bus dead-letters it (MaxDeliveryCountExceeded), and the
 * real reason is kept here, by MessageId, for the operator tool:
 * - a conflict's record sits in the order's partition, written in one batch with the conflict
 *   document, so a redelivery of the same broker message costs one 409 and nothing else;
 * - an invalid message's, in the reserved partition `#rejected` (it may have no order id at all).
 * Nothing is read before processing: a duplicate costs the same on every delivery.
 */
type RejectionContext = FlowContext & { readonly consumerName?: string };

export interface RejectionDetails {
  readonly error: PermanentMessageError;
  readonly dedupKey?: string;
  readonly messageType?: string;
  readonly orderId?: string;
  /** The conflict's own record, written in the same batch as the rejection. */
  readonly evidence?: StoredDocument;
}

export async function recordRejection(envelope: MessageEnvelope, details: RejectionDetails, ctx: RejectionContext): Promise<void> {
  const partition = details.evidence && details.orderId !== undefined ? details.orderId : rejectedMessagesPartition;
  if (envelope.messageId === undefined) {
    // Nothing to find a rejection by (the error log line carries the reason); the conflict is still recorded.
    if (details.evidence) await ctx.store.commit(partition, [create(details.evidence)]);
    return;
  }
  const rejection: RejectionDocument = {
    id: rejectionDocumentId(envelope.messageId, ctx.consumerName),
    orderId: partition,
    docType: 'rejection',
    messageId: envelope.messageId,
    sequenceNumber: envelope.sequenceNumber,
    dedupKey: details.dedupKey ?? details.error.dedupKey,
    messageType: details.messageType,
    messageOrderId: details.orderId,
    reason: details.error.code,
    description: details.error.description,
    conflictDocumentId: details.evidence?.id,
    rejectedAt: ctx.now().toISOString(),
    ttl: ctx.markerTtlSeconds,
  };
  const operations = [...(details.evidence ? [create(details.evidence)] : []), create(rejection)];
  const result = await ctx.store.commit(partition, operations);
  // A redelivery of the same broker message: its first delivery committed this very batch.
  if (result.kind !== 'already-exists' || (envelope.deliveryCount ?? 1) > 1) return;
  // Another broker message under the same key or MessageId (a resubmitted copy): record it too.
  if (details.evidence && result.operationIndex === 1) await ctx.store.commit(partition, [create(details.evidence)]);
  await pointRecordAt(ctx.store, partition, rejection);
}

/** The rejection record names the newest broker message rejected under its MessageId. */
async function pointRecordAt(store: DocumentStore, partition: string, rejection: RejectionDocument): Promise<void> {
  if ((await store.commit(partition, [create(rejection)])).kind === 'committed') return;
  const existing = await store.read<RejectionDocument>(partition, rejection.id);
  if (existing && existing.document.sequenceNumber !== rejection.sequenceNumber) {
    await store.commit(partition, [replace(rejection, existing.etag)]);
  }
}

/** Where the operator tool looks for a message's rejection: `#rejected`, then the order's partition. */
export async function findRejectionRecord(store: DocumentStore, messageId: string, orderId: string | undefined, consumerName?: string): Promise<RejectionDocument | undefined> {
  const id = rejectionDocumentId(messageId, consumerName);
  const invalid = await store.read<RejectionDocument>(rejectedMessagesPartition, id);
  if (invalid || orderId === undefined) return invalid?.document;
  return (await store.read<RejectionDocument>(orderId, id))?.document;
}
