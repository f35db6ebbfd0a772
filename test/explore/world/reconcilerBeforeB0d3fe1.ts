import { replace } from '../../../src/idempotency/index.js';
import type { VersionedDocument } from '../../../src/idempotency/index.js';
import { continueFrom } from '../../../src/shipments/index.js';
import type { Caller, ReconcileItem, ReconcileOptions, ReconcileResult, ShipmentContext, ShipmentRecord } from '../../../src/shipments/index.js';

/**
 * The reconciler as it was before b0d3fe1 (the defect of issue 24, reintroduced in the world only):
 * a round that did not settle a record is counted against the record as it is re-read, checking
 * only that it is still in progress, not that it is still the lease the run read. A delayed copy or
 * a redelivery that took the lease over meanwhile (its booking in flight) is counted against, and at
 * `maxAttempts` escalated; a carrier that gave no answer counts as a round too. The rest (the query,
 * `continueFrom`, the booking's writes) is today's code from src/shipments.
 */
export async function reconcileShipmentsBeforeB0d3fe1(ctx: ShipmentContext, options: ReconcileOptions, caller: Caller): Promise<ReconcileResult> {
  const expired = await ctx.store.find<ShipmentRecord>({
    docType: 'shipment',
    equals: { state: 'in-progress' },
    before: { field: 'leaseExpiresAt', value: ctx.now().toISOString() },
    limit: options.batchSize,
  });
  const items: ReconcileItem[] = [];
  for (const stored of expired) items.push(await reconcileOne(stored, ctx, options, caller));
  return { examined: expired.length, items };
}

async function reconcileOne(
  stored: VersionedDocument<ShipmentRecord>,
  ctx: ShipmentContext,
  options: ReconcileOptions,
  caller: Caller,
): Promise<ReconcileItem> {
  const { id, orderId } = stored.document;
  const settled = await continueFrom(stored, ctx, caller);
  if (settled === 'lost-race') return { id, orderId, result: 'taken-by-another' };
  const { outcome } = settled;
  switch (outcome.kind) {
    case 'created':
    case 'duplicate':
      return { id, orderId, result: 'completed', shipmentId: settled.shipmentId };
    case 'invalid':
    case 'conflict':
      return { id, orderId, result: 'refused', reason: outcome.error.description };
    case 'retry':
      return countFailedRound(id, orderId, outcome.reason, ctx, options);
    default:
      return { id, orderId, result: 'still-in-progress', reason: outcome.kind };
  }
}

/** One more round against the record as it is now; the last allowed round escalates it. (The defect: no owner or lease check.) */
async function countFailedRound(id: string, orderId: string, reason: string, ctx: ShipmentContext, options: ReconcileOptions): Promise<ReconcileItem> {
  const current = await ctx.store.read<ShipmentRecord>(orderId, id);
  if (!current || current.document.state !== 'in-progress') return { id, orderId, result: 'taken-by-another' };
  const attempts = current.document.reconcileAttempts + 1;
  const at = ctx.now().toISOString();
  const escalate = attempts >= options.maxAttempts;
  const next: ShipmentRecord = {
    ...current.document,
    reconcileAttempts: attempts,
    lastError: reason.slice(0, 500),
    updatedAt: at,
    ...(escalate
      ? { state: 'escalated' as const, escalation: { reason: `not settled after ${attempts} reconcile rounds; last: ${reason.slice(0, 300)}`, at } }
      : {}),
  };
  const result = await ctx.store.commit(orderId, [replace(next, current.etag)]);
  if (result.kind !== 'committed') return { id, orderId, result: 'taken-by-another' };
  return { id, orderId, result: escalate ? 'escalated' : 'still-in-progress', reason };
}
