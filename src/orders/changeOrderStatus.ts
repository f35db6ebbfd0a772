import { replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import type { OrderDocument } from './documents.js';
import { pauseAfterLostRace } from './flowContext.js';
import { readOrderAllowingLateArrival } from './readOrder.js';
import type { FlowContext } from './flowContext.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import type { OrderStatusChanged } from './schemas.js';

/**
 * OrderStatusChanged carries absolute state with a version, so it is idempotent by nature: applying
 * it twice leaves the same document, and a copy that arrives late finds a version at least as new
 * and changes nothing. No marker is needed; the etag guard keeps two newer versions from
 * overwriting each other out of order.
 */
export async function applyNewerStatus(
  message: ParsedOrderMessage & { readonly payload: OrderStatusChanged },
  ctx: FlowContext,
): Promise<ProcessingOutcome> {
  const change = message.payload;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const current = await readOrderAllowingLateArrival(change.orderId, ctx);
    if (!current) return { kind: 'retry', reason: `order ${change.orderId} is not stored yet` };
    if (change.version <= current.document.statusVersion) {
      return { kind: 'stale', storedVersion: current.document.statusVersion };
    }
    const updated: OrderDocument = { ...current.document, status: change.status, statusVersion: change.version, statusChangedAt: change.changedAt };
    const result = await ctx.store.commit(change.orderId, [replace(updated, current.etag)]);
    if (result.kind === 'committed') return { kind: 'created' };
    await pauseAfterLostRace(attempt);
  }
  return { kind: 'retry', reason: `order ${change.orderId} changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}
