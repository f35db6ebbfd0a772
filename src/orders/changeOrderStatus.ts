import { replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { recordConflict } from './detectDuplicate.js';
import { orderDocumentId } from './documents.js';
import type { OrderDocument } from './documents.js';
import { pauseAfterLostRace } from './flowContext.js';
import type { FlowContext } from './flowContext.js';
import { orderArrived, parkUntilOrderArrives } from './parkEarlyArrival.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { isSameRequest } from './sameRequest.js';
import type { OrderStatusChanged } from './schemas.js';

/**
 * OrderStatusChanged carries absolute state with a version, so it is idempotent by nature: applying
 * it twice leaves the same document, and a copy that arrives late finds a version at least as new
 * and changes nothing. No marker is needed; the etag guard keeps two newer versions from
 * overwriting each other out of order. Absolute state is no licence to drop a conflict, though:
 * another payload at the stored version (the order keeps that version's fingerprint) is one.
 */
export async function applyNewerStatus(
  message: ParsedOrderMessage & { readonly payload: OrderStatusChanged },
  ctx: FlowContext,
): Promise<ProcessingOutcome> {
  const change = message.payload;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const current = await ctx.store.read<OrderDocument>(change.orderId, orderDocumentId(change.orderId));
    if (!current) {
      const parked = await parkUntilOrderArrives(message, ctx);
      if (parked === orderArrived) continue;
      return parked;
    }
    const stored = current.document;
    if (change.version === stored.statusVersion && stored.statusFingerprint !== undefined) {
      if (isSameRequest(message, stored.statusFingerprint)) return { kind: 'duplicate' };
      return recordConflict(message, { id: stored.id, fingerprint: stored.statusFingerprint, messageId: stored.statusMessageId }, ctx);
    }
    if (change.version <= stored.statusVersion) return { kind: 'stale', storedVersion: stored.statusVersion };
    const updated: OrderDocument = {
      ...stored,
      status: change.status,
      statusVersion: change.version,
      statusChangedAt: change.changedAt,
      statusFingerprint: message.fingerprint,
      statusMessageId: message.messageId,
    };
    const result = await ctx.store.commit(change.orderId, [replace(updated, current.etag)]);
    if (result.kind === 'committed') return { kind: 'created' };
    await pauseAfterLostRace(attempt, ctx);
  }
  return { kind: 'retry', reason: `order ${change.orderId} changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}
