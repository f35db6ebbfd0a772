import type { VersionedDocument } from '../idempotency/index.js';
import type { OutboxDocument } from './outboxDocument.js';
import { publishOutboxEntries } from './publishOutbox.js';
import type { PublishContext, PublishResult } from './publishOutbox.js';

export interface OutboxSweepOptions {
  readonly minAgeSeconds: number;
  /** At most this many pending entries are read in one run, oldest first: a run's memory and cost are bounded. */
  readonly maxItemsPerRun: number;
}

export interface OutboxSweepResult {
  /** Entries pending when the sweep began, as far as its page reached (at most `maxItemsPerRun`). */
  readonly pending: number;
  /** Age of the oldest of them: how far publishing is behind. Undefined when nothing is pending. */
  readonly oldestPendingAgeSeconds?: number;
  readonly oldestPendingId?: string;
  readonly published: PublishResult;
}

/**
 * The backstop for the change feed: the Cosmos DB trigger moves on from a batch once its retries are
 * spent, and a lost lease or a poison batch can leave entries behind. Everything pending longer than
 * `minAgeSeconds` (the feed's own latency, with room) is sent again through the same publisher.
 * One page, oldest first: the oldest pending entry is always the first read (what the lag alert
 * needs), and what is sent leaves the pending set, so the next run reaches the ones behind it.
 */
export async function sweepOutbox(ctx: PublishContext, options: OutboxSweepOptions): Promise<OutboxSweepResult> {
  const nowMs = ctx.now().getTime();
  const cutoff = new Date(nowMs - options.minAgeSeconds * 1000).toISOString();
  const pending = await ctx.store.find<OutboxDocument>({
    docType: 'outbox',
    equals: { state: 'pending' },
    orderBy: 'createdAt',
    limit: options.maxItemsPerRun,
  });
  // Stryker disable next-line EqualityOperator: between two entries of the same age either is an oldest one; the age is the same and the id names one of them
  const oldest = pending.reduce<VersionedDocument<OutboxDocument> | undefined>(
    (a, b) => (a === undefined || b.document.createdAt < a.document.createdAt ? b : a),
    undefined,
  );
  const due = pending.filter((entry) => entry.document.createdAt < cutoff);
  const published = await publishOutboxEntries(due, ctx);
  return {
    pending: pending.length,
    ...(oldest === undefined
      ? {}
      : { oldestPendingAgeSeconds: Math.max(0, Math.round((nowMs - Date.parse(oldest.document.createdAt)) / 1000)), oldestPendingId: oldest.document.id }),
    published,
  };
}
