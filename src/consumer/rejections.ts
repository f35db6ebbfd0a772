import { create, replace } from '../idempotency/index.js';
import type { DocumentStore, PermanentMessageError, StoredDocument } from '../idempotency/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import type { ConsumerRuntime } from './consumerRuntime.js';
import { legacyRejectedMessagesPartition, rejectedMessagesPartition, rejectionDocumentId } from './rejectionDocument.js';
import type { RejectionDocument } from './rejectionDocument.js';

/** `consumerName` scopes the record's id (`rejection|<consumer>|<MessageId>`); it lives as long as the inbox markers. */
export type RejectionContext = Pick<ConsumerRuntime, 'store' | 'now' | 'consumerName' | 'markerTtlSeconds'>;

export interface RejectionDetails {
  readonly error: PermanentMessageError;
  readonly dedupKey?: string;
  readonly messageType?: string;
  readonly orderId?: string;
  /** The conflict's own record, written in the same batch as the rejection. */
  readonly evidence?: StoredDocument;
}

/**
 * The Functions Service Bus trigger cannot dead-letter with a reason: a throw only abandons. So a
 * rejected message is thrown until Service Bus dead-letters it (MaxDeliveryCountExceeded), and the
 * real reason is kept here, by MessageId, for the operator tool:
 * - a conflict's record sits in the order's partition, written in one batch with the conflict
 *   document, so a redelivery of the same broker message costs one 409 and nothing else;
 * - an invalid message's (it may have no order id at all), in one of 16 reserved partitions derived
 *   from its MessageId (`#rejected-<n>`): a flood of invalid messages spreads over all of them.
 * Nothing is read before a first delivery's write. A redelivery of an invalid message (it comes
 * `maxDeliveryCount` times: a flood's cost is mostly its redeliveries) first reads its own record, one
 * point read in its `#rejected-<n>`, and stops there when its first delivery wrote it. Only when it
 * did not is the previous release's single `#rejected` partition read, so a message that release
 * rejected is not recorded again: a flood's redeliveries never all read that one partition. That
 * read can go once its records have expired (INBOX_MARKER_TTL_SECONDS after the deploy).
 */
export async function recordRejection(envelope: MessageEnvelope, details: RejectionDetails, ctx: RejectionContext): Promise<void> {
  const inOrder = details.evidence !== undefined && details.orderId !== undefined;
  if (envelope.messageId === undefined) {
    // Nothing to find a rejection by (the error log line carries the reason); the conflict is still recorded.
    // Stryker disable next-line StringLiteral: `inOrder` means orderId is set, so the '' fallback is never taken (it only narrows the type)
    if (details.evidence)
      await ctx.store.commit(inOrder ? (details.orderId ?? '') : rejectedMessagesPartition(details.evidence.id), [create(details.evidence)]);
    return;
  }
  // Stryker disable next-line StringLiteral: `inOrder` means orderId is set, so the '' fallback is never taken (it only narrows the type)
  const partition = inOrder ? (details.orderId ?? '') : rejectedMessagesPartition(envelope.messageId);
  if (!inOrder && (envelope.deliveryCount ?? 1) > 1 && (await alreadyRecorded(ctx.store, partition, envelope, ctx.consumerName))) return;
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
  // The rejection first: a 409 on it tells a redelivery (its first delivery wrote this very batch)
  // from a 409 on the conflict record alone, which another message with the same key and payload
  // wrote: this message's rejection is still its own to record.
  const operations = [create(rejection), ...(details.evidence ? [create(details.evidence)] : [])];
  const result = await ctx.store.commit(partition, operations);
  if (result.kind !== 'already-exists') return;
  if (result.operationIndex !== 0) {
    await ctx.store.commit(partition, [create(rejection)]);
    return;
  }
  // A redelivery of the same broker message: its first delivery committed this very batch.
  if ((envelope.deliveryCount ?? 1) > 1) return;
  // Another broker message under the same MessageId (a resubmitted copy): record it too.
  if (details.evidence) await ctx.store.commit(partition, [create(details.evidence)]);
  await pointRecordAt(ctx.store, partition, rejection);
}

/**
 * A redelivery's rejection, already there: under its MessageId in its own partition (what a write
 * would answer with a 409, which ends a redelivery the same way), or this very broker message's in
 * the previous release's `#rejected`.
 */
async function alreadyRecorded(store: DocumentStore, partition: string, envelope: MessageEnvelope, consumerName: string | undefined): Promise<boolean> {
  // Stryker disable next-line StringLiteral: called only with a MessageId, so the '' fallback is never taken (it only narrows the type)
  if (await store.read<RejectionDocument>(partition, rejectionDocumentId(envelope.messageId ?? '', consumerName))) return true;
  return recordedByPreviousRelease(store, envelope, consumerName);
}

/** This very broker message's rejection, as the previous release recorded it in `#rejected`. */
async function recordedByPreviousRelease(store: DocumentStore, envelope: MessageEnvelope, consumerName: string | undefined): Promise<boolean> {
  // Stryker disable next-line StringLiteral: called only with a MessageId, so the '' fallback is never taken (it only narrows the type)
  const legacy = await store.read<RejectionDocument>(legacyRejectedMessagesPartition, rejectionDocumentId(envelope.messageId ?? '', consumerName));
  return legacy !== undefined && legacy.document.sequenceNumber === envelope.sequenceNumber;
}

/** The rejection record names the newest broker message rejected under its MessageId. */
async function pointRecordAt(store: DocumentStore, partition: string, rejection: RejectionDocument): Promise<void> {
  if ((await store.commit(partition, [create(rejection)])).kind === 'committed') return;
  const existing = await store.read<RejectionDocument>(partition, rejection.id);
  if (existing && existing.document.sequenceNumber !== rejection.sequenceNumber) {
    await store.commit(partition, [replace(rejection, existing.etag)]);
  }
}

/**
 * Where the operator tool looks for a message's rejection: its `#rejected-<n>` partition (one point
 * read finds an invalid message's), then the order's partition (a conflict's), then the previous
 * release's `#rejected` (records it wrote, until they expire).
 */
export async function findRejectionRecord(
  store: DocumentStore,
  messageId: string,
  orderId: string | undefined,
  consumerName?: string,
): Promise<RejectionDocument | undefined> {
  const id = rejectionDocumentId(messageId, consumerName);
  const partitions = [rejectedMessagesPartition(messageId), ...(orderId === undefined ? [] : [orderId]), legacyRejectedMessagesPartition];
  for (const partition of partitions) {
    const found = await store.read<RejectionDocument>(partition, id);
    if (found) return found.document;
  }
  return undefined;
}
