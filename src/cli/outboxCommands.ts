import { replace } from '../idempotency/index.js';
import type { DocumentStore, VersionedDocument } from '../idempotency/index.js';
import type { OutboxDocument, OutboxState } from '../outbox/index.js';
import { noBulkFilter, takeBulk } from './bulkFilter.js';
import type { BulkFilter } from './bulkFilter.js';
import { outboxItem } from './failureItems.js';
import { findBounded, quietScanBound } from './scanBound.js';
import type { ScanBound } from './scanBound.js';

export interface OutboxContext {
  readonly store: DocumentStore;
}

export interface ListedOutboxEntry {
  readonly orderId: string;
  readonly id: string;
  readonly state: OutboxState;
  readonly eventType: string;
  readonly destination: string;
  readonly messageId: string;
  readonly createdAt: string;
  readonly reason?: string;
  readonly detail?: string;
}

export interface OutboxActionReport {
  readonly orderId: string;
  readonly id: string;
  readonly messageId: string;
  readonly outcome: 'requeued' | 'would-requeue' | 'failed';
  readonly detail: string;
}

/**
 * `outbox list`: entries the publisher set aside (`failed`, with the broker's reason) by default,
 * or those in the given states, oldest first; `pending` ones older than a minute or two mean the
 * publisher is behind. At most `max` rows, and the store is asked for no more than that (and one) of each state.
 */
export async function listOutbox(
  ctx: OutboxContext,
  states: readonly OutboxState[],
  orderId: string | undefined,
  bound: ScanBound & { readonly max: number },
): Promise<ListedOutboxEntry[]> {
  // The oldest `max` of all are among the oldest `max` of each state; a state with more cuts the rows.
  let cut = false;
  const read = bound.max < bound.scanMax ? { scanMax: bound.max, stopped: () => void (cut = true) } : bound;
  const found = await Promise.all(states.map((state) => findEntries(ctx.store, state, orderId, read)));
  const rows = found
    .flat()
    .map((v) => v.document)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  if (cut || rows.length > bound.max) bound.stopped({ what: 'outbox entries', after: bound.max, unit: ' rows', order: 'oldest first', option: '--max' });
  return rows.slice(0, bound.max).map((e) => ({
    orderId: e.orderId,
    id: e.id,
    state: e.state,
    eventType: e.eventType,
    destination: e.destination,
    messageId: e.message.messageId,
    createdAt: e.createdAt,
    reason: e.failure?.reason,
    detail: e.failure?.detail,
  }));
}

/**
 * `outbox requeue`: puts failed entries back to `pending` once their cause is fixed (the topic
 * created, the event made smaller by a new release), etag-guarded. The change feed shows the change
 * and the publisher sends them under their original MessageId.
 */
export async function requeueOutbox(
  ctx: OutboxContext,
  targets: readonly string[],
  all: boolean,
  dryRun: boolean,
  bulk: BulkFilter = noBulkFilter,
  bound: ScanBound = quietScanBound,
): Promise<OutboxActionReport[]> {
  const failed = await findEntries(ctx.store, 'failed', undefined, bound);
  const named = failed.filter(({ document: e }) => all || targets.includes(e.message.messageId) || targets.includes(`${e.orderId}/${e.id}`));
  const chosen = takeBulk(named, ({ document: e }) => outboxItem({ ...e, reason: e.failure?.reason }), bulk);
  const reports: OutboxActionReport[] = [];
  for (const entry of chosen) reports.push(await requeueOne(ctx, entry, dryRun));
  return reports;
}

async function requeueOne(ctx: OutboxContext, { document: e, etag }: VersionedDocument<OutboxDocument>, dryRun: boolean): Promise<OutboxActionReport> {
  const identity = { orderId: e.orderId, id: e.id, messageId: e.message.messageId };
  const was = `${e.failure?.reason ?? 'failed'}: ${e.failure?.detail ?? ''}`.trim();
  if (dryRun) return { ...identity, outcome: 'would-requeue', detail: was };
  const { failure: _failure, ...rest } = e;
  const requeued: OutboxDocument = { ...rest, state: 'pending' };
  const result = await ctx.store.commit(e.orderId, [replace(requeued, etag)]);
  return result.kind === 'committed'
    ? { ...identity, outcome: 'requeued', detail: `was ${was}` }
    : { ...identity, outcome: 'failed', detail: 'changed while we looked: list again' };
}

/** The oldest entries in the state, at most the bound's (`createdAt` is an indexed path of the container: ORDER BY needs one). */
function findEntries(store: DocumentStore, state: OutboxState, orderId: string | undefined, bound: ScanBound): Promise<VersionedDocument<OutboxDocument>[]> {
  const query = { docType: 'outbox', equals: { state }, orderBy: 'createdAt', ...(orderId === undefined ? {} : { partitionKey: orderId }) };
  return findBounded<OutboxDocument>(store, `outbox entries (${state})`, query, bound);
}
