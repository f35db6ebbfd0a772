import { createHash } from 'node:crypto';
import { documentId } from '../idempotency/index.js';

/**
 * Where the previous release kept every invalid message's rejection: one logical partition (20 GB
 * and about 10,000 RU/s at most), read only for records it wrote, until their TTL ends them.
 */
export const legacyRejectedMessagesPartition = '#rejected';

/** How many partitions invalid messages' rejections are spread over: each holds about 1/16 of them. */
const rejectedMessagesPartitionCount = 16;

/**
 * The partition for the rejection of a message that may have no order id at all, derived from its
 * MessageId alone, so the operator tool finds it with one point read. `#` is never in an order id.
 */
export function rejectedMessagesPartition(messageId: string): string {
  const bucket = createHash('sha256').update(messageId, 'utf8').digest().readUInt32BE(0) % rejectedMessagesPartitionCount;
  return `#rejected-${bucket}`;
}

/** Where an operator finds, by MessageId, why a message is on its way to the dead-letter queue. */
export interface RejectionDocument {
  readonly id: string;
  /** `#rejected-<n>` (from the MessageId) for an invalid message, `#rejected` if written by the previous release; the order's partition for a conflict. */
  readonly orderId: string;
  readonly docType: 'rejection';
  readonly messageId?: string;
  /** Ties the record to one broker message: a resubmitted copy has another and is processed afresh. */
  readonly sequenceNumber?: number;
  readonly dedupKey?: string;
  readonly messageType?: string;
  readonly messageOrderId?: string;
  readonly reason: string;
  readonly description: string;
  readonly conflictDocumentId?: string;
  readonly rejectedAt: string;
  readonly ttl: number;
}

/** Scoped by consumer: consumers sharing a container each reject (or not) the same message on their own. */
export const rejectionDocumentId = (messageId: string, consumerName?: string): string =>
  consumerName ? documentId('rejection', consumerName, messageId) : documentId('rejection', messageId);
