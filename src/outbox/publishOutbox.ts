import { TransientStoreError, replace } from '../idempotency/index.js';
import type { DocumentStore, VersionedDocument } from '../idempotency/index.js';
import { TransientSendError } from './eventSender.js';
import type { EventSender, SendOutcome } from './eventSender.js';
import type { OutboxDocument } from './outboxDocument.js';

export interface PublishContext {
  readonly store: DocumentStore;
  readonly sender: EventSender;
  readonly now: () => Date;
  /** How long a published entry stays before it expires (it is history, not state). */
  readonly publishedTtlSeconds: number;
}

export interface PublishResult {
  readonly published: readonly OutboxDocument[];
  /** Refused by the broker for good, now in state `failed` with the reason. */
  readonly failed: readonly OutboxDocument[];
  /** Another publisher (a retried batch, the sweeper) had already moved them on: sent again, marked by the other. */
  readonly alreadyHandled: number;
  /** Destinations that failed for now: their entries stay pending, for the retry policy or the sweeper. */
  readonly transient: readonly TransientSendError[];
  /** Sent, but the mark failed for now: they stay pending and will be sent again under the same MessageId. */
  readonly unmarked: readonly TransientStoreError[];
}

export class TransientPublishError extends Error {
  constructor(readonly failures: readonly (TransientSendError | TransientStoreError)[]) {
    super(`outbox: ${failures.map((f) => f.message).join('; ')}`);
    this.name = 'TransientPublishError';
  }
}

/**
 * Sends each pending entry, then marks it published, etag-guarded. The order matters: marked after
 * sending, a crash in between re-sends the same MessageId (duplicate detection drops it inside its
 * window; consumers deduplicate by key after it); marked before, a crash would lose the event. A
 * destination that fails for now leaves its entries pending and the others go on.
 */
export async function publishOutboxEntries(entries: readonly VersionedDocument<OutboxDocument>[], ctx: PublishContext): Promise<PublishResult> {
  const published: OutboxDocument[] = [];
  const failed: OutboxDocument[] = [];
  const transient: TransientSendError[] = [];
  const unmarked: TransientStoreError[] = [];
  let alreadyHandled = 0;
  for (const [destination, group] of byDestination(entries)) {
    let outcomes: readonly SendOutcome[];
    try {
      outcomes = await ctx.sender.send(destination, group.map((e) => e.document.message));
    } catch (error) {
      if (!(error instanceof TransientSendError)) throw error;
      transient.push(error);
      continue;
    }
    for (const [i, entry] of group.entries()) {
      const outcome = outcomes[i];
      if (!outcome) throw new Error(`the sender answered ${outcomes.length} outcomes for ${group.length} messages`);
      const next = outcome.kind === 'sent' ? markPublished(entry.document, ctx) : markFailed(entry.document, outcome, ctx);
      let result;
      try {
        result = await ctx.store.commit(entry.document.orderId, [replace(next, entry.etag)]);
      } catch (error) {
        if (!(error instanceof TransientStoreError)) throw error;
        unmarked.push(error);
        continue;
      }
      if (result.kind !== 'committed') alreadyHandled += 1;
      else if (next.state === 'published') published.push(next);
      else failed.push(next);
    }
  }
  return { published, failed, alreadyHandled, transient, unmarked };
}

function markPublished(document: OutboxDocument, ctx: PublishContext): OutboxDocument {
  return { ...document, state: 'published', publishedAt: ctx.now().toISOString(), ttl: ctx.publishedTtlSeconds };
}

function markFailed(document: OutboxDocument, outcome: Extract<SendOutcome, { kind: 'refused' }>, ctx: PublishContext): OutboxDocument {
  return { ...document, state: 'failed', failure: { reason: outcome.reason, detail: outcome.detail, at: ctx.now().toISOString() } };
}

function byDestination(entries: readonly VersionedDocument<OutboxDocument>[]): Map<string, VersionedDocument<OutboxDocument>[]> {
  const groups = new Map<string, VersionedDocument<OutboxDocument>[]>();
  for (const entry of entries) {
    const group = groups.get(entry.document.destination) ?? [];
    group.push(entry);
    groups.set(entry.document.destination, group);
  }
  return groups;
}
