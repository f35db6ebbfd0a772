import { PermanentMessageError, readAndClassify } from '../idempotency/index.js';
import type { ExistingRecord, IsSameRequest, ProcessingOutcome, StoredDocument, VanishedRecord } from '../idempotency/index.js';
import { conflictDocumentId } from './documents.js';
import type { ConflictDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { isSameRequest } from './sameRequest.js';

export interface FingerprintedDocument extends StoredDocument {
  readonly fingerprint: string;
  readonly messageId?: string;
}

/** The core's test for an order message: the record holds a fingerprint of this request (sameRequest.ts). */
export function sameRequestAs(message: Pick<ParsedOrderMessage, 'fingerprint' | 'validatedFingerprint'>): IsSameRequest<FingerprintedDocument> {
  return (existing) => isSameRequest(message, existing.fingerprint);
}

/**
 * What the core's decision on an existing record comes to for an order message: a redelivery (the
 * same request) completes with no effect; a different payload under the same key or order id is a
 * conflict, recorded and sent to the dead-letter queue, never silently dropped; a record reported to
 * exist and then read as missing decides nothing, so the message is retried.
 */
export function outcomeOf(message: ParsedOrderMessage, decision: ExistingRecord<FingerprintedDocument> | VanishedRecord, ctx: FlowContext): ProcessingOutcome {
  switch (decision.kind) {
    case 'same-request':
      return { kind: 'duplicate' };
    case 'other-request':
      return recordConflict(message, decision.existing.document, ctx);
    case 'vanished':
      return { kind: 'retry', reason: `${decision.id} was reported to exist but could not be read` };
  }
}

/** The store said the message's record already exists (409): one point read decides (outcomeOf). */
export async function classifyExistingRecord(message: ParsedOrderMessage, existingId: string, ctx: FlowContext): Promise<ProcessingOutcome> {
  return outcomeOf(message, await readAndClassify(ctx.store, message.payload.orderId, existingId, sameRequestAs(message)), ctx);
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
