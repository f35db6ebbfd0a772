import { PermanentMessageError } from '../idempotency/index.js';
import type { ProcessingOutcome, StoredDocument } from '../idempotency/index.js';
import { conflictDocumentId } from './documents.js';
import type { ConflictDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { isSameRequest } from './sameRequest.js';

export interface FingerprintedDocument extends StoredDocument {
  readonly fingerprint: string;
  readonly messageId?: string;
}

/**
 * The store said the message's record already exists (409). One point read tells a redelivery
 * (same fingerprint: complete with no effect) from a different payload under the same key or
 * order id (a conflict: recorded and sent to the dead-letter queue, never silently dropped).
 */
export async function classifyExistingRecord(
  message: ParsedOrderMessage,
  existingId: string,
  ctx: FlowContext,
): Promise<ProcessingOutcome> {
  const orderId = message.payload.orderId;
  const existing = await ctx.store.read<FingerprintedDocument>(orderId, existingId);
  if (!existing) {
    return { kind: 'retry', reason: `${existingId} was reported to exist but could not be read` };
  }
  return classifyAgainst(message, existing.document, ctx);
}

/** The record this message's would have been, as read: the same request is a duplicate, another a conflict. */
export function classifyAgainst(message: ParsedOrderMessage, existing: FingerprintedDocument, ctx: FlowContext): ProcessingOutcome {
  if (isSameRequest(message, existing.fingerprint)) return { kind: 'duplicate' };
  return recordConflict(message, existing, ctx);
}

/**
 * The conflict as an outcome, with its record as evidence: the consumer writes that record in one
 * batch with the rejection record, so a redelivery finds both or neither, for one round trip.
 */
export function recordConflict(message: ParsedOrderMessage, existing: FingerprintedDocument, ctx: FlowContext, detail?: string): ProcessingOutcome {
  const conflict: ConflictDocument = {
    // Derived from key and incoming fingerprint: the same conflict seen twice is one record.
    id: conflictDocumentId(message.key.value, message.fingerprint),
    orderId: message.payload.orderId,
    docType: 'conflict',
    dedupKey: message.key.value,
    messageType: message.type,
    incoming: { messageId: message.messageId, fingerprint: message.fingerprint },
    existing: { messageId: existing.messageId, fingerprint: existing.fingerprint, documentId: existing.id },
    detectedAt: ctx.now().toISOString(),
    // As long as the rejection record that points at it (the marker retention, which covers the resubmit horizon).
    ttl: ctx.markerTtlSeconds,
  };
  const description =
    `${message.type} for order ${conflict.orderId} differs from what is stored in ${existing.id}` +
    ` (stored fingerprint ${existing.fingerprint} from message ${existing.messageId ?? 'unknown'},` +
    ` this one ${message.fingerprint})${detail === undefined ? '' : `: ${detail}`}; conflict recorded as ${conflict.id}`;
  return { kind: 'conflict', error: new PermanentMessageError('PayloadConflict', description, message.key.value), evidence: conflict };
}
