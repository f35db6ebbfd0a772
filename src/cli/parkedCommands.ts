import { randomUUID } from 'node:crypto';
import type { ServiceBusSender } from '@azure/service-bus';
import { consumerKeyPrefix, replace } from '../idempotency/index.js';
import type { DocumentStore, VersionedDocument } from '../idempotency/index.js';
import { idempotencyKeyProperty } from '../orders/index.js';
import { deriveMessageId } from '../servicebus/index.js';
import type { ParkedItemDocument, ParkedItemState } from '../orders/index.js';
import { noBulkFilter, takeBulk } from './bulkFilter.js';
import type { BulkFilter } from './bulkFilter.js';
import type { Output } from './dlqCommands.js';
import { parkedItem } from './failureItems.js';
import { findBounded, quietScanBound } from './scanBound.js';
import type { ScanBound } from './scanBound.js';
import { copyNonce, resubmitCountProperty, resubmitForcedReasonProperty } from './resubmitCopy.js';
import { decideResubmitHorizon } from './resubmitHorizon.js';
import type { ResubmitHorizonDecision, ResubmitPolicy } from './resubmitHorizon.js';
import { firstEnqueuedAtProperty } from '../servicebus/index.js';

/**
 * Early arrivals that could not be applied (`OrderNeverArrived`, `CurrencyMismatch`, a conflict
 * found when their order came) are the dead letters of parking: their messages were completed, so
 * they live in Cosmos DB, not in the dead-letter queue. The operator lists, resubmits or discards
 * them here as they do dead-lettered messages.
 */
export interface ParkedContext {
  readonly store: DocumentStore;
  /** A sender to the orders queue, for resubmits. */
  readonly sender: () => ServiceBusSender;
  readonly consumerName?: string;
  /** How long a resubmitted or discarded item is kept before it expires. */
  readonly keepSeconds: number;
  readonly now: () => number;
  readonly out: Output;
  /** Names this run in the claims it writes (the operator-action record's id, when the caller has it); a random id if absent. */
  readonly runId?: string;
  /** Draws the random part of a copy's MessageId (copyNonce when absent); the stored-format capture fixes it, so its bytes repeat. */
  readonly nonce?: () => string;
}

export interface ParkedSelection {
  /** MessageIds, dedup keys, or `<orderId>/<item id>`. */
  readonly targets: readonly string[];
  readonly all: boolean;
  readonly reason?: string;
  readonly orderId?: string;
  /** `--group`, `--since`, `--until`, `--max`, on the instant `groups` shows (rejected, else parked). */
  readonly bulk?: BulkFilter;
}

export interface ListedParkedItem {
  readonly orderId: string;
  readonly id: string;
  readonly state: ParkedItemState;
  readonly messageType: string;
  readonly messageId?: string;
  readonly dedupKey: string;
  readonly parkedAt: string;
  readonly reason?: string;
  readonly description?: string;
  readonly rejectedAt?: string;
  /** A `resubmitting` item: when a resubmit run claimed it. */
  readonly resubmitClaimedAt?: string;
}

export interface ParkedActionReport {
  readonly orderId: string;
  readonly id: string;
  readonly messageId?: string;
  readonly dedupKey: string;
  readonly outcome: 'resubmitted' | 'would-resubmit' | 'refused' | 'discarded' | 'would-discard' | 'failed';
  readonly copyMessageId?: string;
  readonly detail: string;
}

/**
 * `parked list`: rejected items by default (what needs a person), or those in the given states, oldest
 * first. At most `max` rows: the store is asked for the oldest `max` and one of each state (or, when
 * `--reason` filters after the read, the oldest `scanMax`), never for all.
 */
export async function listParked(
  ctx: ParkedContext,
  states: readonly ParkedItemState[],
  selection: Omit<ParkedSelection, 'targets' | 'all'>,
  bound: ScanBound & { readonly max: number },
): Promise<ListedParkedItem[]> {
  // Unfiltered, the oldest `max` of all are among the oldest `max` of each state; a state with more cuts the rows.
  let cut = false;
  const read = selection.reason === undefined && bound.max < bound.scanMax ? { scanMax: bound.max, stopped: () => void (cut = true) } : bound;
  const found = await Promise.all(states.map((state) => findItems(ctx.store, state, selection.orderId, read)));
  const rows = found
    .flat()
    .map((v) => v.document)
    .filter((item) => selection.reason === undefined || item.rejection?.reason === selection.reason)
    .sort((a, b) => (a.parkedAt < b.parkedAt ? -1 : a.parkedAt > b.parkedAt ? 1 : 0));
  if (cut || rows.length > bound.max) bound.stopped({ what: 'parked items', after: bound.max, unit: ' rows', order: 'oldest first', option: '--max' });
  return rows.slice(0, bound.max).map((item) => ({
    orderId: item.orderId,
    id: item.id,
    state: item.state,
    messageType: item.messageType,
    messageId: item.messageId,
    dedupKey: item.dedupKey,
    parkedAt: item.parkedAt,
    reason: item.rejection?.reason,
    description: item.rejection?.description,
    rejectedAt: item.rejection?.rejectedAt,
    ...(item.state === 'resubmitting' && item.resubmitClaim ? { resubmitClaimedAt: item.resubmitClaim.claimedAt } : {}),
  }));
}

/**
 * `parked resubmit`: claims the item (etag-guarded: `rejected` -> `resubmitting`), sends its message
 * back to the orders queue under a new MessageId with the original key in `idempotency-key`, then
 * marks it `resubmitted` (etag-guarded from the claim). The copy decides again: applied if its order
 * is stored now, parked afresh (with a new horizon) if not. The claim comes first because a discard
 * that commits after the send would be reported done while the copy applies the effect; a claimed
 * item is refused by discard. A crash, or a send that failed, after the claim leaves the item
 * `resubmitting`, listed and selected by the next run, whose copy (same key) the consumer absorbs if
 * the first one got through after all.
 */
export async function resubmitParked(
  ctx: ParkedContext,
  selection: ParkedSelection,
  dryRun: boolean,
  policy: ResubmitPolicy,
  bound: ScanBound = quietScanBound,
): Promise<ParkedActionReport[]> {
  const decided = (await selectedItems(ctx, selection, bound)).map((parked) => ({ parked, horizon: horizonOf(parked.document, ctx.now(), policy) }));
  const refused = ({ parked, horizon }: (typeof decided)[number]): ParkedActionReport => ({
    ...identity(parked.document),
    outcome: 'refused',
    detail: horizon.checked,
  });
  if (dryRun) {
    return decided.map((d) =>
      d.horizon.kind === 'refused'
        ? refused(d)
        : {
            ...identity(d.parked.document),
            outcome: 'would-resubmit',
            copyMessageId: copyIdOf(d.parked.document, (ctx.nonce ?? copyNonce)()),
            detail: `${planDetail(d.parked.document)}${resumes(d.parked.document)}; ${d.horizon.checked}`,
          },
    );
  }
  const sender = ctx.sender();
  const run = ctx.runId ?? randomUUID();
  const reports: ParkedActionReport[] = [];
  try {
    for (const d of decided) reports.push(d.horizon.kind === 'refused' ? refused(d) : await resubmitOne(ctx, sender, run, d.parked, d.horizon));
  } finally {
    await sender.close();
  }
  return reports;
}

/**
 * A parked item's effect may also have been written by another copy of its message (a producer's
 * resend, applied once the order came), whose marker expires with INBOX_MARKER_TTL_SECONDS. The item
 * records when it was parked, not when its message was first sent: that is the earliest time the
 * tool can see, so the check counts from it.
 */
function horizonOf(item: ParkedItemDocument, nowMs: number, policy: ResubmitPolicy): ResubmitHorizonDecision {
  const view = { enqueuedTimeUtc: new Date(item.parkedAt), enqueuedTimeLabel: 'parked at' };
  return decideResubmitHorizon(`parked item ${item.orderId}/${item.id} (${item.messageId ?? item.dedupKey})`, view, nowMs, policy);
}

/**
 * `parked discard`: the operator decided the item's effect must not happen. While its order is
 * missing, a later copy of the message is a duplicate of the discarded item; once the order is
 * stored, a copy is decided afresh on the order's normal path, like any message. An item a resubmit
 * claimed is refused: its copy may be on the queue already, and a discard reported done must mean
 * the effect never happens. The etag guard refuses an item claimed after it was listed.
 */
export async function discardParked(
  ctx: ParkedContext,
  selection: ParkedSelection,
  dryRun: boolean,
  bound: ScanBound = quietScanBound,
): Promise<ParkedActionReport[]> {
  const items = await selectedItems(ctx, selection, bound);
  const refusal = (item: ParkedItemDocument): ParkedActionReport => ({
    ...identity(item),
    outcome: 'refused',
    detail:
      `a parked resubmit claimed it${item.resubmitClaim ? ` at ${item.resubmitClaim.claimedAt} (run ${item.resubmitClaim.run})` : ''}` +
      ' and is sending it, or died after claiming it: its copy may be on the queue, so it can no longer be discarded; run `parked resubmit` again',
  });
  if (dryRun)
    return items.map(({ document: item }) =>
      item.state === 'resubmitting' ? refusal(item) : { ...identity(item), outcome: 'would-discard', detail: planDetail(item) },
    );
  const reports: ParkedActionReport[] = [];
  for (const { document: item, etag } of items) {
    if (item.state === 'resubmitting') {
      reports.push(refusal(item));
      continue;
    }
    const discarded: ParkedItemDocument = { ...item, state: 'discarded', ttl: ctx.keepSeconds };
    const result = await ctx.store.commit(item.orderId, [replace(discarded, etag)]);
    reports.push(
      result.kind === 'committed'
        ? { ...identity(item), outcome: 'discarded', detail: `${item.rejection?.reason ?? 'rejected'}; kept ${ctx.keepSeconds} s as evidence` }
        : { ...identity(item), outcome: 'failed', detail: 'changed while we looked (claimed by a resubmit, or re-parked): list again' },
    );
  }
  return reports;
}

async function resubmitOne(
  ctx: ParkedContext,
  sender: ServiceBusSender,
  run: string,
  parked: VersionedDocument<ParkedItemDocument>,
  horizon: Exclude<ResubmitHorizonDecision, { kind: 'refused' }>,
): Promise<ParkedActionReport> {
  const item = parked.document;
  const copyMessageId = copyIdOf(item, (ctx.nonce ?? copyNonce)());
  const claim = await claimForResubmit(ctx, run, parked);
  if (claim.kind === 'lost')
    return { ...identity(item), outcome: 'failed', detail: `nothing sent: the item ${claim.why}; list it again (it may have been discarded or re-parked)` };
  const lineage = horizon.firstEnqueuedAtEpochMs === undefined ? {} : { [firstEnqueuedAtProperty]: new Date(horizon.firstEnqueuedAtEpochMs).toISOString() };
  try {
    await sender.sendMessages({
      // Exactly what the producer sent, where the item kept it (fields the schema ignores included).
      body: item.receivedJson === undefined ? item.payload : (JSON.parse(item.receivedJson) as unknown),
      contentType: 'application/json',
      subject: item.messageType,
      messageId: copyMessageId,
      applicationProperties: {
        [idempotencyKeyProperty]: producerKeyOf(item.dedupKey, ctx.consumerName),
        [resubmitCountProperty]: resubmitCountOf(item) + 1,
        'resubmitted-from': `parked:${item.orderId}/${item.id}`,
        ...lineage,
        ...(horizon.kind === 'forced' ? { [resubmitForcedReasonProperty]: horizon.reason } : {}),
      },
      ...(horizon.kind === 'safe' ? { timeToLive: horizon.copyTimeToLiveMs } : {}),
    });
  } catch (error) {
    // The copy may have gone although the send failed (its answer lost): the claim stays, so no discard can commit.
    const detail = `send failed, item left claimed (resubmitting): run \`parked resubmit\` again: ${(error as Error).message}`;
    return { ...identity(item), outcome: 'failed', copyMessageId, detail };
  }
  const resubmitted: ParkedItemDocument = { ...claim.item, state: 'resubmitted', ttl: ctx.keepSeconds };
  const marked = await ctx.store.commit(item.orderId, [replace(resubmitted, claim.etag)]);
  // Not committed: the copy was already consumed and re-parked or applied the item (or a later run claimed it again), which is what we want.
  const detail = `${marked.kind === 'committed' ? 'sent; item marked resubmitted' : 'sent; the copy has already taken the item over'}; ${horizon.checked}`;
  return { ...identity(item), outcome: 'resubmitted', copyMessageId, detail };
}

type Claim = { readonly kind: 'claimed'; readonly item: ParkedItemDocument; readonly etag: string } | { readonly kind: 'lost'; readonly why: string };

/**
 * Takes the item as listed (rejected, or claimed by a run that died) for this run, before anything
 * is sent. The store answers a commit without the new etag, so the item is read back: the mark after
 * the send is guarded by the claim's version, and a claim that changed meanwhile (another run took
 * it, a copy re-parked it) is not ours to send. It keeps its TTL (counted again from the claim): a
 * claim nobody takes up ends with the item.
 */
async function claimForResubmit(ctx: ParkedContext, run: string, parked: VersionedDocument<ParkedItemDocument>): Promise<Claim> {
  const item = parked.document;
  const claimed: ParkedItemDocument = {
    ...item,
    state: 'resubmitting',
    resubmitClaim: { claimedAt: new Date(ctx.now()).toISOString(), run },
    ttl: item.ttl ?? ctx.keepSeconds,
  };
  const result = await ctx.store.commit(item.orderId, [replace(claimed, parked.etag)]);
  if (result.kind !== 'committed') return { kind: 'lost', why: `changed since it was listed (${result.kind})` };
  const stored = await ctx.store.read<ParkedItemDocument>(item.orderId, item.id);
  const ours =
    stored?.document.state === 'resubmitting' &&
    stored.document.resubmitClaim?.run === run &&
    stored.document.resubmitClaim.claimedAt === claimed.resubmitClaim?.claimedAt;
  return stored && ours ? { kind: 'claimed', item: stored.document, etag: stored.etag } : { kind: 'lost', why: 'changed right after this run claimed it' };
}

/**
 * Rejected items, and items a resubmit claimed (`resubmitting`): a run that died must not strand them.
 * The oldest `scanMax` of each state are read (what a run holds); named items past them are not reached.
 */
async function selectedItems(ctx: ParkedContext, selection: ParkedSelection, bound: ScanBound): Promise<VersionedDocument<ParkedItemDocument>[]> {
  const found = (await Promise.all(selectableStates.map((state) => findItems(ctx.store, state, selection.orderId, bound)))).flat();
  const chosen = found.filter(({ document: item }) => {
    if (selection.reason !== undefined && item.rejection?.reason !== selection.reason) return false;
    if (selection.all) return true;
    return selection.targets.some((t) => t === item.messageId || t === item.dedupKey || t === `${item.orderId}/${item.id}`);
  });
  const itemOf = ({ document: item }: VersionedDocument<ParkedItemDocument>) =>
    parkedItem({ ...item, reason: item.rejection?.reason, rejectedAt: item.rejection?.rejectedAt });
  return takeBulk(chosen, itemOf, selection.bulk ?? noBulkFilter);
}

/** The oldest items in the state, at most the bound's (`parkedAt` is an indexed path of the container: ORDER BY needs one). */
function findItems(
  store: DocumentStore,
  state: ParkedItemState,
  orderId: string | undefined,
  bound: ScanBound,
): Promise<VersionedDocument<ParkedItemDocument>[]> {
  const query = { docType: 'parked', equals: { state }, orderBy: 'parkedAt', ...(orderId === undefined ? {} : { partitionKey: orderId }) };
  return findBounded<ParkedItemDocument>(store, `parked items (${state})`, query, bound);
}

/** What `parked resubmit` and `parked discard` select (discard to refuse a claimed item by name), and what `parked list` shows by default. */
export const selectableStates: readonly ParkedItemState[] = ['rejected', 'resubmitting'];

const resumes = (item: ParkedItemDocument) =>
  item.state === 'resubmitting' ? `; takes up the resubmit claimed at ${item.resubmitClaim?.claimedAt ?? 'an unknown time'}` : '';
const identity = (item: ParkedItemDocument) => ({ orderId: item.orderId, id: item.id, messageId: item.messageId, dedupKey: item.dedupKey });
/** A re-parked copy's item carries the copy's MessageId: count on from its suffix rather than stack suffixes. */
function resubmitCountOf(item: ParkedItemDocument): number {
  return Number(resubmitSuffix.exec(item.messageId ?? '')?.[1] ?? 0);
}
/** `~resubmit-<n>`, and the random part copies have had since (copyNonce): counted on, not stacked. */
const resubmitSuffix = /~resubmit-(\d+)(?:-[0-9a-f]{12})?$/;
/**
 * The copy's MessageId: the count, then a random part, so no sender can send it first and have the
 * broker drop the copy as a duplicate while the item is marked resubmitted.
 */
const copyIdOf = (item: ParkedItemDocument, nonce: string) =>
  deriveMessageId((item.messageId ?? item.dedupKey).replace(resubmitSuffix, ''), `~resubmit-${resubmitCountOf(item) + 1}-${nonce}`);
const planDetail = (item: ParkedItemDocument) =>
  `${item.messageType} for order ${item.orderId}: ${item.rejection?.reason ?? 'rejected'} (${item.rejection?.description ?? ''})`;

/** The key as the producer gave it: the consumer adds its own name back when it reads the copy. */
function producerKeyOf(dedupKey: string, consumerName?: string): string {
  const prefix = consumerKeyPrefix(consumerName);
  return prefix && dedupKey.startsWith(prefix) ? dedupKey.slice(prefix.length) : dedupKey;
}
