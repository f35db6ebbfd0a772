import { replace } from '../idempotency/index.js';
import type { ParkedItemRejected, VersionedDocument } from '../idempotency/index.js';
import { describeRejection, drainParkedItems } from './applyParkedItems.js';
import { orderDocumentId } from './documents.js';
import type { OrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import { withState } from './parkedItems.js';
import type { ParkedItemDocument } from './parkedItems.js';

export interface SweepOptions {
  /** An item parked longer than this whose order is still missing is rejected as OrderNeverArrived. */
  readonly horizonSeconds: number;
  /** Younger items are left to their order's own batch. */
  readonly minAgeSeconds: number;
  /** At most this many items are read in one run (one page, oldest first): a flood of orphans costs each run the same. */
  readonly maxItemsPerRun: number;
  /** Where the previous run's page ended (its last `parkedAt`); absent: start at the oldest. */
  readonly after?: string;
}

export interface SweepResult {
  /** Parked items older than the minimum age that the sweep looked at. */
  readonly examined: number;
  /** Applied to orders that are stored (what a crash between batches, or a full batch, left). */
  readonly applied: number;
  /** Rejected now: OrderNeverArrived, or found unusable once their order was there. */
  readonly rejected: readonly ParkedItemRejected[];
  /** Age of the oldest item still parked after the sweep (its order missing, the horizon not reached); 0 when none. */
  readonly oldestParkedAgeSeconds: number;
  /** Where the next run goes on from: the last `parkedAt` of a full page; absent when this page reached the end. */
  readonly nextAfter?: string;
}

export const orderNeverArrived = 'OrderNeverArrived';

/**
 * The backstop for parked items, run by a timer: whatever is still parked after `minAgeSeconds` is
 * applied if its order is stored, and rejected with `OrderNeverArrived` once it has waited past the
 * horizon. Every write is etag-guarded, so a sweep racing an order's batch (or another sweep) changes
 * an item once: applied or rejected, never both. One run reads one page of at most `maxItemsPerRun`,
 * oldest first, from where the last run stopped: its memory and cost are bounded however many
 * orphans are parked, and every item is reached within ceil(parked / page) runs.
 */
export async function sweepParkedItems(ctx: FlowContext, options: SweepOptions): Promise<SweepResult> {
  const nowMs = ctx.now().getTime();
  const cutoff = new Date(nowMs - options.minAgeSeconds * 1000).toISOString();
  const horizon = new Date(nowMs - options.horizonSeconds * 1000).toISOString();
  const stale = await ctx.store.find<ParkedItemDocument>({
    docType: 'parked',
    equals: { state: 'parked' },
    before: { field: 'parkedAt', value: cutoff },
    ...(options.after === undefined ? {} : { after: { field: 'parkedAt', value: options.after } }),
    orderBy: 'parkedAt',
    limit: options.maxItemsPerRun,
  });
  let applied = 0;
  let oldestLeft: string | undefined;
  const rejected: ParkedItemRejected[] = [];
  for (const [orderId, items] of groupByOrder(stale)) {
    const order = await ctx.store.read<OrderDocument>(orderId, orderDocumentId(orderId));
    if (order) {
      const drained = await drainParkedItems(orderId, ctx);
      applied += drained.applied;
      rejected.push(...drained.rejected.map(describeRejection));
      continue;
    }
    for (const item of items) {
      if (item.document.parkedAt >= horizon) {
        if (oldestLeft === undefined || item.document.parkedAt < oldestLeft) oldestLeft = item.document.parkedAt;
        continue;
      }
      const escalated = await escalate(item, options.horizonSeconds, ctx);
      if (escalated) rejected.push(escalated);
    }
  }
  const oldestParkedAgeSeconds = oldestLeft === undefined ? 0 : Math.max(0, Math.round((nowMs - Date.parse(oldestLeft)) / 1000));
  // A full page may have more behind it: the next run goes on from here, and wraps to the oldest once a page is short.
  // Items parked in the same instant across a page's end wait for the next round: the sweeper is a backstop, not a deadline.
  const last = stale.at(-1)?.document.parkedAt;
  const nextAfter = stale.length === options.maxItemsPerRun ? last : undefined;
  return { examined: stale.length, applied, rejected, oldestParkedAgeSeconds, ...(nextAfter === undefined ? {} : { nextAfter }) };
}

async function escalate(parked: VersionedDocument<ParkedItemDocument>, horizonSeconds: number, ctx: FlowContext): Promise<ParkedItemRejected | undefined> {
  const item = parked.document;
  const description =
    `${item.messageType} ${item.dedupKey} waited since ${item.parkedAt} for order ${item.orderId},` +
    ` which was not stored within ${horizonSeconds} s (PARKED_ITEM_HORIZON_SECONDS)`;
  const rejection = { reason: orderNeverArrived, description, rejectedAt: ctx.now().toISOString() };
  const result = await ctx.store.commit(item.orderId, [replace(withState(item, { state: 'rejected', rejection, ttl: ctx.markerTtlSeconds }), parked.etag)]);
  // Changed since the query (applied by its order, or by another sweep): it is no longer ours to reject.
  if (result.kind !== 'committed') return undefined;
  return describeRejection({ item, reason: orderNeverArrived, description });
}

function groupByOrder(items: readonly VersionedDocument<ParkedItemDocument>[]): Map<string, VersionedDocument<ParkedItemDocument>[]> {
  const groups = new Map<string, VersionedDocument<ParkedItemDocument>[]>();
  for (const item of items) groups.set(item.document.orderId, [...(groups.get(item.document.orderId) ?? []), item]);
  return groups;
}
