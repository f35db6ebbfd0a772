import { fingerprintPayload } from '../../../src/idempotency/index.js';
import type { InMemoryDocumentStore, StoredDocument } from '../../../src/idempotency/index.js';
import { orderNeverArrived, rejectedMessagesPartition, rejectionDocumentId } from '../../../src/orders/index.js';
import type {
  ConflictDocument,
  InboxMarkerDocument,
  OrderDocument,
  ParkedItemDocument,
  ParkingLotDocument,
  PaymentReceived,
  RejectionDocument,
} from '../../../src/orders/index.js';
import { checkClaims, reasonFrom } from './claimInvariants.js';
import { claimOf } from './claimWorld.js';
import type { ModelMessage, OrderScenario } from './orderScenario.js';
import { parkingHorizonSeconds, worldNameOf } from './orderScenario.js';
import type { WorldRun } from './orderWorld.js';

const fingerprintOf = (m: ModelMessage): string => fingerprintPayload(m.type, m.body);

function documentsOf(memory: InMemoryDocumentStore, orderId: string) {
  const all = memory.list(orderId) as (StoredDocument & { docType?: string })[];
  const ofType = <D>(docType: string) => all.filter((d) => d.docType === docType) as D[];
  return {
    order: ofType<OrderDocument>('order')[0],
    outbox: ofType<StoredDocument>('outbox'),
    markers: ofType<InboxMarkerDocument>('inbox'),
    parked: ofType<ParkedItemDocument>('parked'),
    gate: ofType<ParkingLotDocument>('parking-lot')[0],
  };
}

/**
 * The flows alone, without the sweeper's backstop, leave no item parked behind a closed gate: an
 * early arrival is either applied by its order's batch or finds the order stored. (A crash between
 * the batches of an order with more parked items than one batch holds is the backstop's job; the
 * model's orders hold far fewer.)
 */
export function checkBeforeBackstop(scenario: OrderScenario, run: WorldRun): string[] {
  return scenario.orderIds.flatMap((orderId) => {
    const docs = documentsOf(run.memory, orderId);
    // A payment parked under its claim waits guarded by it: without it, a copy under another key would claim the paymentId afresh.
    const unguarded = docs.parked
      .filter(
        (p) =>
          p.state === 'parked' && p.claimed === true && claimOf(run.memory, String((p.payload as { paymentId?: unknown }).paymentId))?.dedupKey !== p.dedupKey,
      )
      .map((p) => `${p.id} waits parked for ${orderId} without its payment's claim naming its key (the claim ran out or names another)`);
    if (docs.gate?.state !== 'closed') return unguarded;
    return [
      ...unguarded,
      ...docs.parked
        .filter((p) => p.state === 'parked')
        .map((p) => `${p.id} is left parked behind ${orderId}'s closed gate, with nothing left to apply it but the sweeper`),
    ];
  });
}

/**
 * Defects the exploration found that are not fixed yet. Each is tolerated only in its exact shape,
 * and a test (orderFlows.explore.test.ts) asserts that the exploration still finds it with the
 * tolerance off: when the fix lands, that test fails, and the tolerance goes.
 */
export interface KnownDefects {
  /**
   * A conflicting payload sent twice under new MessageIds (a producer re-send of the same wrong
   * payment): the copy whose first delivery did not reach the conflict batch (a refused write, a
   * crash) records nothing on a later delivery. Its batch [conflict, rejection] meets the other
   * copy's conflict record (409 at operation 0), and recordRejection takes a 409 on a delivery past
   * the first for its own earlier write (src/consumer/rejections.ts); the message is dead-lettered
   * with no reason recorded under its MessageId.
   */
  readonly conflictCopyUnrecorded?: boolean;
  /**
   * A delivery that lost its lock (another delivery of the same message completed it) meets its
   * parked item rejected (CurrencyMismatch, OrderNeverArrived), re-parks it, finds the order stored
   * and hands the item back (src/orders/parkEarlyArrival.ts `handBackToOrder`): the item is replaced
   * by a fresh copy in state `resubmitted`, without its rejection. If that delivery dies right after,
   * nothing redelivers the message (its other delivery completed it): the request is neither applied
   * nor rejected, and the item's rejection, the only record of why, is gone.
   */
  readonly rejectionErasedByHandBack?: boolean;
}

/** Everything the world must hold once it has run out of work and the backstop sweep has run. */
export function checkAtQuiescence(scenario: OrderScenario, run: WorldRun, known: KnownDefects = {}): string[] {
  const violations: string[] = [...run.stuck.map((name) => `${name} never finished: waiting on nothing`)];
  // What was sent: the scenario's messages and the copies the operator resubmitted.
  const sentAll = [...run.fates.values()].map((fate) => fate.message);
  const recordedFor = (m: ModelMessage): RejectionDocument | undefined =>
    [m.orderId, rejectedMessagesPartition(m.messageId), '#rejected']
      .map((pk) => run.memory.list(pk).find((d) => d.id === rejectionDocumentId(m.messageId)) as RejectionDocument | undefined)
      .find(Boolean);
  const knownUnrecordedCopy = (m: ModelMessage): boolean =>
    known.conflictCopyUnrecorded === true &&
    run.memory.list(m.orderId).some((d) => {
      const conflict = d as ConflictDocument;
      return (
        conflict.docType === 'conflict' &&
        conflict.dedupKey === m.key &&
        conflict.incoming.fingerprint === fingerprintOf(m) &&
        conflict.incoming.messageId !== m.messageId
      );
    });
  const reasonFor = (m: ModelMessage): RejectionDocument | true | undefined => recordedFor(m) ?? (knownUnrecordedCopy(m) ? true : undefined);
  // A request (key and payload) is explained when any of its copies has a rejection record, or its
  // parked item carries one (kept through a later resubmit). A dead-lettered message needs its own
  // record, by MessageId: that is where the operator looks it up.
  const sameRequest = (a: ModelMessage, b: ModelMessage) => a.key === b.key && fingerprintOf(a) === fingerprintOf(b);
  const hasReason = (m: ModelMessage, docs: ReturnType<typeof documentsOf>) =>
    sentAll.some((copy) => sameRequest(copy, m) && reasonFor(copy) !== undefined) ||
    docs.parked.some((p) => p.dedupKey === m.key && p.fingerprint === fingerprintOf(m) && p.rejection !== undefined) ||
    (known.rejectionErasedByHandBack === true &&
      docs.parked.some((p) => p.dedupKey === m.key && p.fingerprint === fingerprintOf(m) && p.state === 'resubmitted' && p.rejection === undefined));

  for (const fate of run.fates.values()) {
    if (fate.completed === undefined && !fate.deadLettered) violations.push(`${worldNameOf(fate.message)} neither completed nor dead-lettered`);
    if (fate.deadLettered && !reasonFor(fate.message))
      violations.push(`${worldNameOf(fate.message)} dead-lettered (last outcome ${fate.deadLettered.kind}) with no reason recorded`);
  }
  for (const orderId of scenario.orderIds) {
    const docs = documentsOf(run.memory, orderId);
    const sent = sentAll.filter((m) => m.orderId === orderId);
    violations.push(...checkOrder(orderId, docs, sent, hasReason));
    if (scenario.byPaymentId !== true) violations.push(...checkPayments(orderId, docs, sent, hasReason, (m) => recordedFor(m)?.reason === 'PayloadConflict'));
    violations.push(...checkStatus(orderId, docs, sent, hasReason));
    for (const p of docs.parked) {
      if (p.state === 'parked') violations.push(`${p.id} of ${orderId} still parked after the backstop sweep past the horizon`);
      if (p.rejection?.reason === orderNeverArrived && Date.parse(p.rejection.rejectedAt) - Date.parse(p.parkedAt) < parkingHorizonSeconds * 1000) {
        violations.push(`${p.id} of ${orderId} rejected as ${orderNeverArrived} before its horizon (parked ${p.parkedAt}, rejected ${p.rejection.rejectedAt})`);
      }
    }
  }
  if (scenario.byPaymentId === true) violations.push(...checkClaims(scenario, run, sentAll, (m) => reasonFrom(run.memory, recordedFor(m), m)));
  return violations;
}

type Docs = ReturnType<typeof documentsOf>;

/** What the request's parked item says, if it has one: the first thing to look at in a failure. */
function itemState(docs: Docs, m: ModelMessage): string {
  const item = docs.parked.find((p) => p.dedupKey === m.key && p.fingerprint === fingerprintOf(m));
  return item ? ` (its parked item is ${item.state}${item.rejection ? `, rejected as ${item.rejection.reason}` : ', with no rejection'})` : '';
}
type HasReason = (m: ModelMessage, docs: Docs) => boolean;

/** Stored once, from one of the OrderPlaced sent, with one OrderAccepted entry; any other payload's rejection recorded. */
function checkOrder(orderId: string, docs: Docs, sent: readonly ModelMessage[], hasReason: HasReason): string[] {
  const placed = sent.filter((m) => m.type === 'OrderPlaced');
  if (placed.length === 0) return docs.order ? [`${orderId} stored though no OrderPlaced was sent`] : [];
  if (!docs.order) return [`${orderId} not stored though ${placed.map((m) => m.messageId).join(', ')} sent`];
  const violations = docs.outbox.length === 1 ? [] : [`${orderId} has ${docs.outbox.length} OrderAccepted outbox entries`];
  if (!placed.some((m) => fingerprintOf(m) === docs.order!.fingerprint)) violations.push(`${orderId} stored from no OrderPlaced that was sent`);
  for (const m of placed)
    if (fingerprintOf(m) !== docs.order.fingerprint && !hasReason(m, docs))
      violations.push(`${m.messageId} conflicts with ${orderId} as stored, and no reason is recorded`);
  return violations;
}

/** amountPaid is the sum of the distinct payments applied, each key at most once, each valid one applied or escalated. */
function checkPayments(
  orderId: string,
  docs: Docs,
  sent: readonly ModelMessage[],
  hasReason: HasReason,
  recordedConflict: (m: ModelMessage) => boolean,
): string[] {
  const violations: string[] = [];
  const payments = sent.filter((m) => m.type === 'PaymentReceived');
  const counted = docs.markers.filter((mk) => mk.messageType === 'PaymentReceived');
  if (docs.order) {
    const sum = counted.reduce((total, mk) => total + (mk.payload as PaymentReceived).amount, 0);
    if (docs.order.amountPaid !== sum || docs.order.paymentCount !== counted.length) {
      violations.push(
        `${orderId} has amountPaid ${docs.order.amountPaid} over ${docs.order.paymentCount} payments; its inbox markers say ${sum} over ${counted.length}`,
      );
    }
  } else if (counted.length > 0) violations.push(`${orderId} is not stored, yet ${counted.length} payments are marked applied`);
  for (const key of new Set(payments.map((m) => m.key))) {
    const variants = payments.filter((m) => m.key === key);
    const marker = counted.find((mk) => mk.dedupKey === key);
    // Escalated: parked past its horizon, or a valid payload that met another payload holding its key
    // first (two payloads under one key are a conflict, whichever is valid: the sender must say which
    // it meant), dead-lettered with the conflict on record for the operator, who can resubmit it.
    const escalated =
      docs.parked.some((p) => p.dedupKey === key && p.rejection?.reason === orderNeverArrived) ||
      variants.some((m) => m.body.currency === 'EUR' && recordedConflict(m));
    if (marker && !variants.some((m) => fingerprintOf(m) === marker.fingerprint && m.body.currency === 'EUR'))
      violations.push(`${key} applied from a payload that was never sent in the order's currency`);
    if (docs.order && !marker && !escalated && variants.some((m) => m.body.currency === 'EUR'))
      violations.push(`${key} sent in the order's currency, neither applied nor escalated`);
    for (const m of variants) {
      if (marker && fingerprintOf(m) === marker.fingerprint) continue;
      if (!hasReason(m, docs)) violations.push(`${m.messageId} (${key}) not applied, and no reason recorded${itemState(docs, m)}`);
    }
  }
  return violations;
}

/** The final status is the highest version sent (unless that version waited out its horizon); a contradicting payload at it is recorded. */
function checkStatus(orderId: string, docs: Docs, sent: readonly ModelMessage[], hasReason: HasReason): string[] {
  const changes = sent.filter((m) => m.type === 'OrderStatusChanged');
  const versionOf = (m: ModelMessage) => m.body.version as number;
  if (!docs.order) return changes.filter((m) => !hasReason(m, docs)).map((m) => `${m.messageId} for ${orderId}, never stored, has no reason recorded`);
  const escalated = (v: number) =>
    docs.parked.some(
      (p) =>
        p.messageType === 'OrderStatusChanged' &&
        p.payload.orderId === orderId &&
        (p.payload as { version: number }).version === v &&
        p.rejection?.reason === orderNeverArrived,
    );
  const due = Math.max(0, ...changes.map(versionOf).filter((v) => !escalated(v)));
  const stored = docs.order.statusVersion;
  const violations: string[] = [];
  if (stored < due || (stored > 0 && !changes.some((m) => versionOf(m) === stored)))
    violations.push(`${orderId} ends at status version ${stored}; the highest version sent and not escalated is ${due}`);
  const atStored = changes.filter((m) => versionOf(m) === stored);
  if (stored > 0 && !atStored.some((m) => fingerprintOf(m) === docs.order!.statusFingerprint))
    violations.push(`${orderId}'s status at version ${stored} is from no message sent`);
  for (const m of atStored)
    if (fingerprintOf(m) !== docs.order.statusFingerprint && !hasReason(m, docs))
      violations.push(`${m.messageId} contradicts ${orderId}'s status at version ${stored}, and no reason is recorded`);
  return violations;
}
