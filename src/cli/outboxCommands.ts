import { replace } from '../idempotency/index.js';
import type { DocumentStore, VersionedDocument } from '../idempotency/index.js';
import type { OutboxDocument, OutboxState } from '../outbox/index.js';
import { noBulkFilter, takeBulk } from './bulkFilter.js';
import type { BulkFilter } from './bulkFilter.js';
import { outboxItem } from './failureItems.js';

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
 * or those in the given states; `pending` ones older than a minute or two mean the publisher is behind.
 */
export async function listOutbox(ctx: OutboxContext, states: readonly OutboxState[], orderId?: string): Promise<ListedOutboxEntry[]> {
  const found = await Promise.all(states.map((state) => findEntries(ctx.store, state, orderId)));
  return found
    .flat()
    .map((v) => v.document)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
    .map((e) => ({
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
): Promise<OutboxActionReport[]> {
  const failed = await findEntries(ctx.store, 'failed');
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

function findEntries(store: DocumentStore, state: OutboxState, orderId?: string): Promise<VersionedDocument<OutboxDocument>[]> {
  return store.find<OutboxDocument>({ docType: 'outbox', equals: { state }, ...(orderId === undefined ? {} : { partitionKey: orderId }) });
}
