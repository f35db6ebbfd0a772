import { replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { recordConflict } from './duplicateOrConflict.js';
import { appliedStatusFingerprint, orderDocumentId, withStatus } from './documents.js';
import type { OrderDocument } from './documents.js';
import { pauseAfterLostRace } from '../consumer/index.js';
import type { FlowContext } from './flowContext.js';
import { orderArrived, parkUntilOrderArrives } from './parkEarlyArrival.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { isSameRequest } from './sameRequest.js';
import type { OrderStatusChanged } from './schemas.js';
import { versionJump, versionJumpError } from './statusVersionStep.js';

/**
 * OrderStatusChanged carries absolute state with a version, so it is idempotent by nature: applying
 * it twice leaves the same document, and a copy that arrives late finds a version at least as new
 * and changes nothing. No marker is needed; the etag guard keeps two newer versions from
 * overwriting each other out of order. Absolute state is no licence to drop a conflict, though:
 * another payload at the stored version (the order keeps that version's fingerprint) is one.
 */
export async function applyNewerStatus(message: ParsedOrderMessage & { readonly payload: OrderStatusChanged }, ctx: FlowContext): Promise<ProcessingOutcome> {
  const change = message.payload;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const current = await ctx.store.read<OrderDocument>(change.orderId, orderDocumentId(change.orderId));
    if (!current) {
      // An order not stored yet starts at version 0: a change it could never take is refused now, not parked.
      const jump = versionJump(change, 0, ctx);
      if (jump !== undefined) return { kind: 'invalid', error: versionJumpError(jump, message.key.value) };
      const parked = await parkUntilOrderArrives(message, ctx);
      if (parked === orderArrived) continue;
      return parked;
    }
    const stored = current.document;
    if (change.version <= stored.statusVersion) return decideAgainstApplied(message, stored, ctx);
    const jump = versionJump(change, stored.statusVersion, ctx);
    if (jump !== undefined) return { kind: 'invalid', error: versionJumpError(jump, message.key.value) };
    const updated = withStatus(stored, change, { fingerprint: message.fingerprint, messageId: message.messageId });
    const result = await ctx.store.commit(change.orderId, [replace(updated, current.etag)]);
    if (result.kind === 'committed') return { kind: 'created' };
    await pauseAfterLostRace(attempt, ctx);
  }
  return { kind: 'retry', reason: `order ${change.orderId} changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}

/**
 * A version the order has reached: the same status at the stored version is a duplicate, an older
 * one stale; another payload at a version whose fingerprint the order remembers is a conflict.
 */
function decideAgainstApplied(
  message: ParsedOrderMessage & { readonly payload: OrderStatusChanged },
  stored: OrderDocument,
  ctx: FlowContext,
): Promise<ProcessingOutcome> | ProcessingOutcome {
  const version = message.payload.version;
  const applied = appliedStatusFingerprint(stored, version);
  if (applied !== undefined && !isSameRequest(message, applied)) {
    const messageId = version === stored.statusVersion ? stored.statusMessageId : undefined;
    return recordConflict(message, { id: stored.id, fingerprint: applied, messageId }, ctx);
  }
  if (version === stored.statusVersion && applied !== undefined) return { kind: 'duplicate' };
  return { kind: 'stale', storedVersion: stored.statusVersion };
}
