import { TransientStoreError, replace } from '../idempotency/index.js';
import type { ConsumerRuntime } from '../consumer/index.js';
import type { VersionedDocument } from '../idempotency/index.js';
import { TransientSendError } from './eventSender.js';
import type { EventSender, SendOutcome } from './eventSender.js';
import type { OutboxDocument } from './outboxDocument.js';
import { settleBounded } from './settleBounded.js';

/** The runtime every root resolves (its store and clock), and what publishing adds to it. */
export interface PublishContext extends Pick<ConsumerRuntime, 'store' | 'now'> {
  readonly sender: EventSender;
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
 *
 * Each destination gets one send, all of them at once; once every send has answered, the marks run,
 * at most `markConcurrency` at once. A mark is a replace of its own entry in its own partition and
 * depends on no other mark, so their order is free: a crash among them leaves some entries marked
 * and some pending, as a crash between two sequential marks did, and the pending ones are sent
 * again. The answer, or the throw, comes only once every send and mark has settled: an invocation
 * that fails has no write of its own left in flight when its batch is retried.
 */
export async function publishOutboxEntries(entries: readonly VersionedDocument<OutboxDocument>[], ctx: PublishContext): Promise<PublishResult> {
  const groups = [...byDestination(entries)];
  const sends = await settleBounded(groups, ctx.markConcurrency, ([destination, group]) => sendGroup(destination, group, ctx));
  const transient: TransientSendError[] = [];
  const toMark: SentEntry[] = [];
  let unexpected: { readonly error: unknown } | undefined;
  for (const send of sends) {
    if (send.status === 'fulfilled') toMark.push(...send.value);
    else if (send.reason instanceof TransientSendError) transient.push(send.reason);
    else unexpected ??= { error: send.reason };
  }
  const marks = await settleBounded(toMark, ctx.markConcurrency, ({ entry, outcome }) =>
    outcome.kind === 'sent' ? markSent(entry, ctx) : markRefused(entry, outcome, ctx),
  );
  const published: OutboxDocument[] = [];
  const failed: OutboxDocument[] = [];
  const unmarked: TransientStoreError[] = [];
  let alreadyHandled = 0;
  for (const mark of marks) {
    if (mark.status === 'rejected') {
      if (mark.reason instanceof TransientStoreError) unmarked.push(mark.reason);
      else unexpected ??= { error: mark.reason };
    } else if (mark.value === undefined) alreadyHandled += 1;
    else if (mark.value.state === 'published') published.push(mark.value);
    else failed.push(mark.value);
  }
  if (unexpected) throw unexpected.error;
  return { published, failed, alreadyHandled, transient, unmarked };
}

interface SentEntry {
  readonly entry: VersionedDocument<OutboxDocument>;
  readonly outcome: SendOutcome;
}

/** One destination's entries in one send; each with the broker's answer for it. */
async function sendGroup(destination: string, group: readonly VersionedDocument<OutboxDocument>[], ctx: PublishContext): Promise<SentEntry[]> {
  const outcomes = await ctx.sender.send(
    destination,
    group.map((e) => e.document.message),
  );
  // Checked before any mark: an answer that does not match the messages says nothing about any of them.
  if (outcomes.length !== group.length) throw new Error(`the sender answered ${outcomes.length} outcomes for ${group.length} messages`);
  return group.map((entry, i) => ({ entry, outcome: outcomes[i]! }));
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
async function markRefused(
  entry: VersionedDocument<OutboxDocument>,
  outcome: Extract<SendOutcome, { kind: 'refused' }>,
  ctx: PublishContext,
): Promise<OutboxDocument | undefined> {
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
