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
  /** Marks in flight at once (OUTBOX_MARK_CONCURRENCY): each is its own replace, in its entry's partition. */
  readonly markConcurrency: number;
}

export interface PublishResult {
  readonly published: readonly OutboxDocument[];
  /**
   * Refused by the broker, now in state `failed` with the reason. A send of the same entry by another
   * publisher that went out turns it `published` (it wins over any refusal); one whose answer was
   * lost cannot, so `failed` means "the last attempt was refused", and a requeue re-sends it under
   * the same MessageId, which the broker drops inside its window and consumers absorb after it.
   */
  readonly failed: readonly OutboxDocument[];
  /** Another publisher (a retried batch, the sweeper) had already moved them on: its mark stands, unless this send went out over its refusal. */
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
      let marked: OutboxDocument | undefined;
      try {
        marked = outcome.kind === 'sent' ? await markSent(entry, ctx) : await markRefused(entry, outcome, ctx);
      } catch (error) {
        if (!(error instanceof TransientStoreError)) throw error;
        unmarked.push(error);
        continue;
      }
      if (marked === undefined) alreadyHandled += 1;
      else if (marked.state === 'published') published.push(marked);
      else failed.push(marked);
    }
  }
  return { published, failed, alreadyHandled, transient, unmarked };
}

/** Marks after a lost race before the entry counts as still busy: each lost race means another writer moved it on. */
const maxMarkAttempts = 3;

/**
 * The broker accepted the message, and that stays true whatever another publisher saw: `published`
 * replaces a `failed` mark written meanwhile by a publisher that was refused (the sweeper, a
 * retried batch), whose refusal says only that its own attempt failed. Etag-guarded; after a lost
 * race the entry is read again. Undefined when another publisher marked it published first.
 */
async function markSent(entry: VersionedDocument<OutboxDocument>, ctx: PublishContext): Promise<OutboxDocument | undefined> {
  const { orderId, id } = entry.document;
  let current: VersionedDocument<OutboxDocument> | undefined = entry;
  for (let attempt = 1; attempt <= maxMarkAttempts; attempt += 1) {
    const next = markPublished(current.document, ctx);
    const result = await ctx.store.commit(orderId, [replace(next, current.etag)]);
    if (result.kind === 'committed') return next;
    current = await ctx.store.read<OutboxDocument>(orderId, id);
    if (!current || current.document.state === 'published') return undefined;
  }
  throw new TransientStoreError(`outbox entry ${orderId}/${id} was sent, but changed under ${maxMarkAttempts} marks in a row`);
}

/**
 * `failed` only from the pending entry this publisher read (its etag): a lost race means another
 * writer moved it on, and its state stands (published after a send that went out, failed after
 * another refusal, pending again after an operator's requeue, for the next publisher).
 */
async function markRefused(entry: VersionedDocument<OutboxDocument>, outcome: Extract<SendOutcome, { kind: 'refused' }>, ctx: PublishContext): Promise<OutboxDocument | undefined> {
  const next: OutboxDocument = { ...entry.document, state: 'failed', failure: { reason: outcome.reason, detail: outcome.detail, at: ctx.now().toISOString() } };
  const result = await ctx.store.commit(entry.document.orderId, [replace(next, entry.etag)]);
  return result.kind === 'committed' ? next : undefined;
}

function markPublished(document: OutboxDocument, ctx: PublishContext): OutboxDocument {
  const { failure: _refusedElsewhere, ...rest } = document;
  return { ...rest, state: 'published', publishedAt: ctx.now().toISOString(), ttl: ctx.publishedTtlSeconds };
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
