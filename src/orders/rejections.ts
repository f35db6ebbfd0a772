import { create, replace } from '../idempotency/index.js';
import type { PermanentMessageError } from '../idempotency/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import { rejectedMessagesPartition, rejectionDocumentId } from './documents.js';
import type { RejectionDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';

/**
 * The Functions Service Bus trigger cannot dead-letter with a reason: a throw only abandons. So a
 * rejected message is thrown until Service Bus dead-letters it (MaxDeliveryCountExceeded), and the
 * real reason is kept here, by MessageId, for the operator tool. Each further delivery of the same
 * broker message costs one point read of this record (see findRejection).
 */
type RejectionContext = FlowContext & { readonly consumerName?: string };

export interface RejectionDetails {
  readonly error: PermanentMessageError;
  readonly dedupKey?: string;
  readonly messageType?: string;
  readonly orderId?: string;
}

export async function recordRejection(envelope: MessageEnvelope, details: RejectionDetails, ctx: RejectionContext): Promise<void> {
  if (envelope.messageId === undefined) return; // nothing to find it by; the error log line carries the reason
  const rejection: RejectionDocument = {
    id: rejectionDocumentId(envelope.messageId, ctx.consumerName),
    orderId: rejectedMessagesPartition,
    docType: 'rejection',
    messageId: envelope.messageId,
    sequenceNumber: envelope.sequenceNumber,
    dedupKey: details.dedupKey ?? details.error.dedupKey,
    messageType: details.messageType,
    messageOrderId: details.orderId,
    reason: details.error.code,
    description: details.error.description,
    rejectedAt: ctx.now().toISOString(),
    ttl: ctx.markerTtlSeconds,
  };
  const result = await ctx.store.commit(rejectedMessagesPartition, [create(rejection)]);
  if (result.kind !== 'already-exists') return;
  // A resubmitted copy (same MessageId, new sequence number) was rejected again: point the record at it.
  const existing = await ctx.store.read<RejectionDocument>(rejectedMessagesPartition, rejection.id);
  if (existing && existing.document.sequenceNumber !== rejection.sequenceNumber) {
    await ctx.store.commit(rejectedMessagesPartition, [replace(rejection, existing.etag)]);
  }
}

/**
 * On a redelivery, the rejection recorded for this very broker message (same sequence number), if
 * any. A first delivery skips the read: it cannot have been rejected yet. A resubmitted copy has a
 * new sequence number, so it is always processed afresh (perhaps the fault was fixed meanwhile).
 */
export async function findRejection(envelope: MessageEnvelope, ctx: RejectionContext): Promise<RejectionDocument | undefined> {
  if (envelope.deliveryCount === 1 || envelope.messageId === undefined || envelope.sequenceNumber === undefined) {
    return undefined;
  }
  const found = await ctx.store.read<RejectionDocument>(rejectedMessagesPartition, rejectionDocumentId(envelope.messageId, ctx.consumerName));
  return found?.document.sequenceNumber === envelope.sequenceNumber ? found.document : undefined;
}
