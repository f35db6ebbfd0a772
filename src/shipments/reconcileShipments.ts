import { replace } from '../idempotency/index.js';
import type { VersionedDocument } from '../idempotency/index.js';
import { continueFrom } from './bookShipment.js';
import type { Caller, ShipmentContext } from './bookShipment.js';
import { CarrierUnavailableError } from './carrierClient.js';
import { roundsAgainstCurrentAttempt, sameLease } from './shipmentRecord.js';
import type { ShipmentRecord } from './shipmentRecord.js';

export interface ReconcileOptions {
  /** Rounds that ended without an outcome though the carrier answered (counted against one lease), before a record is escalated to an operator. */
  readonly maxAttempts: number;
  /** How long a carrier may stay unreachable for a record (from the first such round) before it is escalated. */
  readonly transientBudgetMs: number;
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
 * it finds is recorded, and only a key the carrier never saw is called again. A round in which the
 * carrier answered without settling a record counts against its current lease (`maxAttempts`); a
 * round without an answer counts against the transient retry budget. Either spent, the record is
 * escalated for an operator.
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

async function reconcileOne(
  stored: VersionedDocument<ShipmentRecord>,
  ctx: ShipmentContext,
  options: ReconcileOptions,
  caller: Caller,
): Promise<ReconcileItem> {
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
      return countFailedRound(stored.document, outcome.reason, outcome.cause instanceof CarrierUnavailableError, ctx, options, caller);
    // Stryker disable next-line ConditionalExpression: unreachable; continueFrom settles a record only as created, duplicate, invalid, conflict or retry, and this branch keeps the switch total over ProcessingOutcome's other kinds
    default:
      // Stryker disable next-line ObjectLiteral,StringLiteral: unreachable, as the line above says
      return { id, orderId, result: 'still-in-progress', reason: outcome.kind };
  }
}

/**
 * Counts a round that did not settle the record, against the record as it is now, and only when it
 * is still the lease this run read (or the one this run took over itself): a record another owner
 * took over, released or settled since the query is theirs, and counting against it would escalate
 * a booking that is going on. The check and the count are one write, guarded by the etag re-read.
 * A carrier that could not be reached counts against the transient retry budget instead of rounds.
 */
async function countFailedRound(
  read: ShipmentRecord,
  reason: string,
  unreachable: boolean,
  ctx: ShipmentContext,
  options: ReconcileOptions,
  caller: Caller,
): Promise<ReconcileItem> {
  const { id, orderId } = read;
  const current = await ctx.store.read<ShipmentRecord>(orderId, id);
  const ours = current?.document.state === 'in-progress' && (sameLease(current.document, read) || current.document.owner === caller.owner);
  if (!current || !ours) return { id, orderId, result: 'taken-by-another' };
  // Another run counted a round since this one read the record: both saw the same attempt at the same
  // time, one round, not two (else overlapping runs escalate on one observation).
  if (!unreachable && roundsAgainstCurrentAttempt(current.document) !== roundsAgainstCurrentAttempt(read)) return { id, orderId, result: 'taken-by-another' };
  const now = ctx.now();
  // Runs in quick succession (a backlog of timer runs, one started by hand) are one round.
  if (!unreachable && withinALeaseOfLastRound(current.document, now, ctx.leaseMs)) return { id, orderId, result: 'still-in-progress', reason };
  const next = unreachable ? unreachableRound(current.document, reason, now, options) : unsettledRound(current.document, reason, now, options);
  const result = await ctx.store.commit(orderId, [replace(next, current.etag)]);
  if (result.kind !== 'committed') return { id, orderId, result: 'taken-by-another' };
  return { id, orderId, result: next.state === 'escalated' ? 'escalated' : 'still-in-progress', reason };
}

/** A round that ended without an outcome while the carrier did answer (a request still in flight, the order not stored): one more; the last allowed escalates. */
function unsettledRound(record: ShipmentRecord, reason: string, now: Date, options: ReconcileOptions): ShipmentRecord {
  const attempts = roundsAgainstCurrentAttempt(record) + 1;
  const counted = {
    ...record,
    reconcileAttempts: attempts,
    reconcileAttemptsAgainst: record.attempt,
    lastReconcileRoundAt: now.toISOString(),
    lastError: reason.slice(0, 500),
    updatedAt: now.toISOString(),
  };
  if (attempts < options.maxAttempts) return counted;
  return escalated(counted, `not settled after ${attempts} reconcile rounds; last: ${reason.slice(0, 300)}`, now);
}

function withinALeaseOfLastRound(record: ShipmentRecord, now: Date, leaseMs: number): boolean {
  if (roundsAgainstCurrentAttempt(record) === 0 || record.lastReconcileRoundAt === undefined) return false;
  return now.getTime() - Date.parse(record.lastReconcileRoundAt) < leaseMs;
}

/** No answer from the carrier: the budget runs from the first such round; once it is spent, the record is escalated. */
function unreachableRound(record: ShipmentRecord, reason: string, now: Date, options: ReconcileOptions): ShipmentRecord {
  const since = record.carrierUnreachableSince ?? now.toISOString();
  const counted = { ...record, carrierUnreachableSince: since, lastError: reason.slice(0, 500), updatedAt: now.toISOString() };
  const elapsedMs = now.getTime() - Date.parse(since);
  if (elapsedMs < options.transientBudgetMs) return counted;
  return escalated(
    counted,
    `the carrier gave no answer for ${Math.round(elapsedMs / 1000)} s, the transient retry budget (TRANSIENT_RETRY_BUDGET_SECONDS); last: ${reason.slice(0, 300)}`,
    now,
  );
}

function escalated(record: ShipmentRecord, reason: string, now: Date): ShipmentRecord {
  return { ...record, state: 'escalated', escalation: { reason, at: now.toISOString() } };
}
