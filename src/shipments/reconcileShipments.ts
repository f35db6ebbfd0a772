import { replace } from '../idempotency/index.js';
import type { VersionedDocument } from '../idempotency/index.js';
import { continueFrom } from './bookShipment.js';
import type { Caller, ShipmentContext } from './bookShipment.js';
import type { ShipmentRecord } from './shipmentRecord.js';

export interface ReconcileOptions {
  /** Rounds that could not settle a record before it is escalated to an operator. */
  readonly maxAttempts: number;
  /** Records examined per run: the query's cost and the run's length stay bounded. */
  readonly batchSize: number;
}

export type ReconciledAs = 'completed' | 'refused' | 'still-in-progress' | 'escalated' | 'taken-by-another';

export interface ReconcileItem {
  readonly id: string;
  readonly orderId: string;
  readonly result: ReconciledAs;
  readonly shipmentId?: string;
  readonly reason?: string;
}

export interface ReconcileResult {
  readonly examined: number;
  readonly items: readonly ReconcileItem[];
}

/**
 * Finds `in-progress` records whose lease has run out (an owner that crashed, or a message that
 * stopped coming back) and settles each as a redelivery would: a look-up by key first; the booking
 * it finds is recorded, and only a key the carrier never saw is called again. A round that cannot
 * settle a record counts against it; at `maxAttempts` the record is escalated for an operator.
 */
export async function reconcileShipments(ctx: ShipmentContext, options: ReconcileOptions, caller: Caller): Promise<ReconcileResult> {
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

async function reconcileOne(stored: VersionedDocument<ShipmentRecord>, ctx: ShipmentContext, options: ReconcileOptions, caller: Caller): Promise<ReconcileItem> {
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

/** One more round against the record as it is now; the last allowed round escalates it. */
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
    ...(escalate ? { state: 'escalated' as const, escalation: { reason: `not settled after ${attempts} reconcile rounds; last: ${reason.slice(0, 300)}`, at } } : {}),
  };
  const result = await ctx.store.commit(orderId, [replace(next, current.etag)]);
  if (result.kind !== 'committed') return { id, orderId, result: 'taken-by-another' };
  return { id, orderId, result: escalate ? 'escalated' : 'still-in-progress', reason };
}
