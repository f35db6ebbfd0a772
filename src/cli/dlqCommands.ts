import type { ServiceBusReceivedMessage, ServiceBusReceiver, ServiceBusSender } from '@azure/service-bus';
import type { DocumentStore } from '../idempotency/index.js';
import { dedupKeyOf, retryProperties } from '../orders/index.js';
import { bodyForTool, bodyToShow } from './bodyView.js';
import { noBulkFilter, passesBulkFilter } from './bulkFilter.js';
import { isSelected } from './deadLetterSelection.js';
import type { Selection } from './deadLetterSelection.js';
import { forEachLocked, isLockLost, keepLocked, peekAll } from './deadLetterQueue.js';
import type { LockedOutcome } from './deadLetterQueue.js';
import { deadLetterItem } from './failureItems.js';
import { envelopeOfReceived } from './receivedEnvelope.js';
import { routeCopy } from './copyDelivery.js';
import type { SubscriptionRoute } from './copyDelivery.js';
import { copyNonce, planResubmit } from './resubmitCopy.js';
import type { ResubmitPlan } from './resubmitCopy.js';
import { decideResubmitHorizon } from './resubmitHorizon.js';
import type { ResubmitHorizonDecision, ResubmitPolicy } from './resubmitHorizon.js';
import { deadLetterStop, quietScanBound } from './scanBound.js';
import type { ScanBound } from './scanBound.js';
import { storeStateOf, storedRecordsOf } from './storeState.js';
import type { StoreState } from './storeState.js';

export interface Output {
  line(text: string): void;
  progress(text: string): void;
}

export interface DlqContext {
  readonly receiver: ServiceBusReceiver;
  /** A receiver on the entity itself (not its dead-letter queue), peeked only: an edit looks there for a copy under the original's key. */
  readonly active?: ServiceBusReceiver;
  readonly sender: () => ServiceBusSender;
  readonly entityPath: string;
  /** For a topic subscription: the copy's `to`, so the project's rules route it to that subscription alone. */
  readonly resubmitTo?: string;
  /** For a topic subscription: its rules, read before the run; a copy no rule is sure to take is not sent. */
  readonly route?: SubscriptionRoute;
  readonly store?: DocumentStore;
  readonly consumerName?: string;
  readonly duplicateDetectionWindowMs: number;
  readonly now: () => number;
  readonly out: Output;
}

export interface ListedMessage {
  readonly sequenceNumber: number;
  readonly messageId?: string;
  readonly dedupKey?: string;
  readonly deadLetterReason?: string;
  readonly deadLetterErrorDescription?: string;
  readonly deliveryCount?: number;
  readonly enqueuedTimeUtc?: string;
  readonly store: StoreState;
}

/** `list`'s bounds: messages read (`scanMax`) and rows shown (`max`), each a stop when reached. */
export interface ListBound extends ScanBound {
  readonly max: number;
}

/**
 * `list`: one row per dead-lettered message that passes the filters, with what the store knows of
 * it, in sequence order. At most `scanMax` messages are read and `max` rows kept (each row costs a
 * store read): a stop at either is reported, the rows found so far are the answer.
 */
export async function listDeadLetters(ctx: DlqContext, selection: Selection, bound: ListBound): Promise<ListedMessage[]> {
  const rows: ListedMessage[] = [];
  let read = 0;
  for await (const m of peekAll(ctx.receiver, Math.min(250, bound.scanMax))) {
    read += 1;
    if (isSelected(dlqView(m), selection, ctx.now())) {
      if (rows.length >= bound.max) {
        bound.stopped(deadLetterStop(ctx.entityPath, bound.max, ' rows'));
        break;
      }
      const envelope = envelopeOfReceived(m);
      const body = bodyForTool(m);
      rows.push({
        ...identityOf(m),
        dedupKey: dedupKeyOf(envelope, body, ctx.consumerName),
        deadLetterReason: m.deadLetterReason,
        deadLetterErrorDescription: m.deadLetterErrorDescription,
        deliveryCount: m.deliveryCount,
        enqueuedTimeUtc: m.enqueuedTimeUtc?.toISOString(),
        store: await storeStateOf(envelope, body, { store: ctx.store, consumerName: ctx.consumerName }),
      });
      if (rows.length % 200 === 0) ctx.out.progress(`listed ${rows.length}...`);
    }
    if (read >= bound.scanMax) {
      bound.stopped(deadLetterStop(ctx.entityPath, bound.scanMax));
      break;
    }
  }
  return rows;
}

/** `show`: every property and the body of one dead-lettered message, by sequence number or MessageId. */
export async function showDeadLetter(ctx: DlqContext, target: string): Promise<Record<string, unknown> | undefined> {
  for await (const m of peekAll(ctx.receiver)) {
    if (!isSelected(dlqView(m), { targets: [target], all: false }, ctx.now())) continue;
    const envelope = envelopeOfReceived(m);
    const body = bodyForTool(m);
    return {
      sequenceNumber: m.sequenceNumber?.toNumber(),
      messageId: m.messageId,
      dedupKey: dedupKeyOf(envelope, body, ctx.consumerName),
      subject: m.subject,
      contentType: m.contentType,
      correlationId: m.correlationId,
      deadLetterReason: m.deadLetterReason,
      deadLetterErrorDescription: m.deadLetterErrorDescription,
      deadLetterSource: m.deadLetterSource,
      deliveryCount: m.deliveryCount,
      enqueuedTimeUtc: m.enqueuedTimeUtc?.toISOString(),
      expiresAtUtc: m.expiresAtUtc?.toISOString(),
      timeToLive: m.timeToLive,
      applicationProperties: m.applicationProperties,
      store: await storeStateOf(envelope, body, { store: ctx.store, consumerName: ctx.consumerName }),
      stored: await storedRecordsOf(envelope, body, { store: ctx.store, consumerName: ctx.consumerName }),
      body: bodyToShow(body),
    };
  }
  return undefined;
}

export interface ActionReport {
  readonly sequenceNumber: number;
  readonly messageId?: string;
  /** `refused`: the retention check found that the markers may have expired (see `detail`); nothing was sent. */
  readonly outcome: 'resubmitted' | 'would-resubmit' | 'refused' | 'purged' | 'would-purge' | 'failed';
  readonly copyMessageId?: string;
  readonly detail: string;
}

export interface ResubmitHooks {
  /** Runs between the send of the copy and the removal of the original: tests put a crash here. */
  readonly afterSend?: (original: ServiceBusReceivedMessage) => Promise<void> | void;
}

/**
 * `resubmit`: sends a copy of each selected message to the entity, then removes the dead-lettered
 * original. In that order: a crash in between leaves the original (resubmitted again later, the
 * consumer absorbs the second copy) and never a loss.
 */
export async function resubmitDeadLetters(
  ctx: DlqContext,
  selection: Selection,
  dryRun: boolean,
  policy: ResubmitPolicy,
  hooks: ResubmitHooks = {},
  bound: ScanBound = quietScanBound,
): Promise<ActionReport[]> {
  if (dryRun) return plannedActions(ctx, selection, bound, 'would-resubmit', policy);
  const reports: ActionReport[] = [];
  const sender = ctx.sender();
  const cap = capOf(selection);
  const run = await forEachLocked(
    ctx.receiver,
    async (m): Promise<LockedOutcome> => {
      if (!selects(ctx, selection, m) || !cap.take()) return 'declined';
      const horizon = horizonOf(ctx, m, policy);
      if (horizon.kind === 'refused') {
        reports.push({ ...identityOf(m), outcome: 'refused', detail: horizon.checked });
        return 'declined';
      }
      const plan = planOf(ctx, m, horizon);
      if ('refused' in plan) {
        reports.push({ ...identityOf(m), outcome: 'refused', detail: plan.refused });
        return 'declined';
      }
      const report = await resubmitOne(ctx, sender, m, plan, horizon, hooks);
      if (report === 'lock-lost') {
        cap.giveBack();
        return 'lock-lost';
      }
      reports.push(report);
      if (reports.length % 100 === 0) ctx.out.progress(`resubmitted ${reports.length}...`);
      return 'handled';
    },
    () => allTargetsDone(selection, reports) || cap.full(),
    { scanMax: bound.scanMax },
  );
  if (run.stoppedAfter !== undefined) bound.stopped(deadLetterStop(ctx.entityPath, run.stoppedAfter));
  return reports;
}

/** 'lock-lost' when the lock ran out before anything was sent: the message is simply locked again later. */
async function resubmitOne(
  ctx: DlqContext,
  sender: ServiceBusSender,
  m: ServiceBusReceivedMessage,
  plan: RoutedPlan,
  horizon: Exclude<ResubmitHorizonDecision, { kind: 'refused' }>,
  hooks: ResubmitHooks,
): Promise<ActionReport | 'lock-lost'> {
  const base = identityOf(m);
  try {
    await keepLocked(ctx.receiver, m);
  } catch (error) {
    if (isLockLost(error)) return 'lock-lost';
    return { ...base, outcome: 'failed', detail: error instanceof Error ? error.message : String(error) };
  }
  try {
    await sender.sendMessages(plan.copy);
    await hooks.afterSend?.(m);
    await ctx.receiver.completeMessage(m);
    const why =
      plan.messageIdDecision === 'new'
        ? 'new MessageId (the queue detects duplicates: the broker would drop a copy under a MessageId sent inside its window); idempotency-key keeps the dedup key'
        : 'same MessageId (the queue does not detect duplicates)';
    return { ...base, outcome: 'resubmitted', copyMessageId: String(plan.copy.messageId), detail: `${why}; ${horizon.checked}${plan.routed ?? ''}` };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    // The copy may have been sent: the original stays dead-lettered, and resubmitting it again is
    // safe (the copy keeps the dedup key, so the consumer absorbs whichever copy comes second).
    return {
      ...base,
      outcome: 'failed',
      copyMessageId: String(plan.copy.messageId),
      detail: `${detail}; the original is still dead-lettered and safe to resubmit again`,
    };
  }
}

/** `purge`: removes the selected dead-lettered messages for good (each handed to `beforeRemove`, the export, first). */
export async function purgeDeadLetters(
  ctx: DlqContext,
  selection: Selection,
  dryRun: boolean,
  beforeRemove?: (m: ServiceBusReceivedMessage) => Promise<void>,
  bound: ScanBound = quietScanBound,
): Promise<ActionReport[]> {
  if (dryRun) return plannedActions(ctx, selection, bound, 'would-purge');
  const reports: ActionReport[] = [];
  const cap = capOf(selection);
  const run = await forEachLocked(
    ctx.receiver,
    async (m): Promise<LockedOutcome> => {
      if (!selects(ctx, selection, m) || !cap.take()) return 'declined';
      const base = identityOf(m);
      try {
        // Exported (written and flushed) first: a failed export leaves the message where it was.
        await beforeRemove?.(m);
        await ctx.receiver.completeMessage(m);
        reports.push({ ...base, outcome: 'purged', detail: m.deadLetterReason ?? '' });
      } catch (error) {
        if (isLockLost(error)) {
          cap.giveBack();
          return 'lock-lost';
        }
        reports.push({ ...base, outcome: 'failed', detail: error instanceof Error ? error.message : String(error) });
      }
      return 'handled';
    },
    () => allTargetsDone(selection, reports) || cap.full(),
    { scanMax: bound.scanMax },
  );
  if (run.stoppedAfter !== undefined) bound.stopped(deadLetterStop(ctx.entityPath, run.stoppedAfter));
  return reports;
}

async function plannedActions(
  ctx: DlqContext,
  selection: Selection,
  bound: ScanBound,
  outcome: 'would-resubmit' | 'would-purge',
  policy?: ResubmitPolicy,
): Promise<ActionReport[]> {
  const reports: ActionReport[] = [];
  const max = (selection.bulk ?? noBulkFilter).max;
  let read = 0;
  for await (const m of peekAll(ctx.receiver, Math.min(250, bound.scanMax))) {
    if (selects(ctx, selection, m)) reports.push(plannedAction(ctx, m, outcome, policy));
    if (reports.length >= max || allTargetsDone(selection, reports)) break;
    if ((read += 1) >= bound.scanMax) {
      bound.stopped(deadLetterStop(ctx.entityPath, bound.scanMax));
      break;
    }
  }
  return reports;
}

function plannedAction(ctx: DlqContext, m: ServiceBusReceivedMessage, outcome: 'would-resubmit' | 'would-purge', policy?: ResubmitPolicy): ActionReport {
  if (outcome === 'would-purge' || policy === undefined) return { ...identityOf(m), outcome, detail: m.deadLetterReason ?? '' };
  const horizon = horizonOf(ctx, m, policy);
  if (horizon.kind === 'refused') return { ...identityOf(m), outcome: 'refused', detail: horizon.checked };
  const plan = planOf(ctx, m, horizon);
  if ('refused' in plan) return { ...identityOf(m), outcome: 'refused', detail: plan.refused };
  return {
    ...identityOf(m),
    outcome,
    copyMessageId: String(plan.copy.messageId),
    detail: `${m.deadLetterReason ?? ''}; ${horizon.checked}${plan.routed ?? ''}`,
  };
}

function horizonOf(ctx: DlqContext, m: ServiceBusReceivedMessage, policy: ResubmitPolicy): ResubmitHorizonDecision {
  const name = m.messageId === undefined ? `message #${String(m.sequenceNumber)}` : `message ${String(m.messageId)}`;
  return decideResubmitHorizon(name, m, ctx.now(), policy);
}

type RoutedPlan = ResubmitPlan & { readonly routed?: string };

/** The copy, and for a subscription the rule that will take it; refused when none is sure to (the original then stays). */
function planOf(
  ctx: DlqContext,
  m: ServiceBusReceivedMessage,
  horizon: Exclude<ResubmitHorizonDecision, { kind: 'refused' }>,
): RoutedPlan | { readonly refused: string } {
  const dedupKey = dedupKeyOf(envelopeOfReceived(m), bodyForTool(m));
  // One nonce per message: the copy checked, routed and sent is one copy, under one MessageId.
  const nonce = copyNonce();
  const plan = (to: string | undefined) =>
    planResubmit(m, { entityPath: ctx.entityPath, to, duplicateDetectionWindowMs: ctx.duplicateDetectionWindowMs, dedupKey, horizon, nonce });
  const keyless = keylessCopy(m, dedupKey, plan(ctx.resubmitTo));
  if (keyless) return { refused: keyless };
  if (!ctx.route) return plan(ctx.resubmitTo);
  const routed = routeCopy(ctx.route, (to) => plan(to).copy);
  if (routed.kind === 'refused') return { refused: routed.why };
  const address = routed.to === undefined ? 'addressed to nobody, as the original was' : `to ${routed.to}`;
  return { ...plan(routed.to), routed: `; ${address}, taken by rule ${routed.rule} of ${ctx.route.subscription}` };
}

/**
 * Why a copy must not be sent: the consumer finds no usable key in the original (it refuses it,
 * never processes it keyless), but would find one in the copy (the MessageId the tool made up, or
 * that MessageId pinned in `idempotency-key` over a CloudEvent whose attributes are unusable), so
 * two copies of one message could both apply. A copy as unusable as its original may go: it is refused again.
 */
function keylessCopy(m: ServiceBusReceivedMessage, dedupKey: string | undefined, plan: ResubmitPlan): string | undefined {
  if (dedupKey !== undefined) return undefined;
  const copy = plan.copy;
  const copyEnvelope = {
    ...envelopeOfReceived(m),
    messageId: copy.messageId === undefined ? undefined : String(copy.messageId),
    applicationProperties: copy.applicationProperties ?? {},
  };
  const copyKey = dedupKeyOf(copyEnvelope, bodyForTool(m));
  if (copyKey === undefined) return undefined;
  const name = m.messageId === undefined ? `message #${String(m.sequenceNumber)}` : `message ${String(m.messageId)}`;
  return `not sent: ${name} has no dedup key the consumer can use (idempotency-key, CloudEvents source and id, or MessageId), and its copy would be keyed by ${copyKey}, which the tool made up; purge it, or have its producer send it again with a key`;
}

/** The message filters and the bulk ones (`--group` is of this entity's dead-letter queue). */
function selects(ctx: DlqContext, selection: Selection, m: ServiceBusReceivedMessage): boolean {
  return isSelected(dlqView(m), selection, ctx.now()) && passesBulkFilter(deadLetterItem(m, ctx.entityPath), selection.bulk ?? noBulkFilter);
}

/**
 * `--max`: messages are handed to the action several at once, so a member is counted when it is
 * taken, not when its report arrives; one whose lock ran out is given back (it comes again).
 */
function capOf(selection: Selection): { take(): boolean; giveBack(): void; full(): boolean } {
  const max = (selection.bulk ?? noBulkFilter).max;
  let taken = 0;
  return {
    take: () => {
      if (taken >= max) return false;
      taken += 1;
      return true;
    },
    giveBack: () => void (taken -= 1),
    full: () => taken >= max,
  };
}

function allTargetsDone(selection: Selection, reports: readonly ActionReport[]): boolean {
  return !selection.all && selection.targets.length > 0 && reports.length >= selection.targets.length;
}

/** How reports and filters name a message: its sequence number and MessageId. */
function identityOf(m: ServiceBusReceivedMessage): { sequenceNumber: number; messageId?: string } {
  return { sequenceNumber: m.sequenceNumber?.toNumber() ?? 0, messageId: m.messageId === undefined ? undefined : String(m.messageId) };
}

function dlqView(m: ServiceBusReceivedMessage) {
  const retryOf = m.applicationProperties?.[retryProperties.of];
  return {
    ...identityOf(m),
    retryOf: typeof retryOf === 'string' ? retryOf : undefined,
    deadLetterReason: m.deadLetterReason,
    deadLetterErrorDescription: m.deadLetterErrorDescription,
    deliveryCount: m.deliveryCount,
    enqueuedTimeUtc: m.enqueuedTimeUtc,
    body: bodyForTool(m),
  };
}
