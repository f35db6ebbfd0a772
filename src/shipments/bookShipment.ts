import { PermanentMessageError, classifyRecord, createOrClassify, replace } from '../idempotency/index.js';
import type { ConsumerRuntime } from '../consumer/index.js';
import type { CreateOrClassifyResult, ProcessingOutcome, VersionedDocument } from '../idempotency/index.js';
import { orderDocumentId, withShipment } from '../orders/index.js';
import type { OrderDocument } from '../orders/index.js';
import { CarrierUnavailableError } from './carrierClient.js';
import type { BookingAnswer, CarrierClient } from './carrierClient.js';
import { shipmentFailure } from './failureCodes.js';
import type { ShipmentEvent } from './orderAcceptedEvent.js';
import { completed, leaseIsLive, newShipmentRecord, refused, shipmentRecordId, takenOver } from './shipmentRecord.js';
import type { ShipmentRecord } from './shipmentRecord.js';

/** What the booking and the reconciler need: the consumers' runtime (store, clock, lost-race rounds), the carrier and the lease. */
export interface ShipmentContext extends Pick<ConsumerRuntime, 'store' | 'now' | 'maxConcurrencyAttempts'> {
  readonly carrier: CarrierClient;
  /** How long an owner may call before others may reconcile: independent of any lock or timeout. */
  readonly leaseMs: number;
}

/** Who is asking: one invocation (its retries included) or one reconciler run. */
export interface Caller {
  readonly owner: string;
  readonly traceparent?: string;
}

export type BookingResult = {
  readonly outcome: ProcessingOutcome;
  readonly shipmentId?: string;
  /** How the booking became known: this call, a look-up by key, an operator, or the record already completed. */
  readonly via?: 'booking' | 'lookup' | 'operator' | 'record';
};

/**
 * Books the event's shipment exactly once in effect:
 * 1. create the record `in-progress` under the caller's lease (a 409 means someone has or had it);
 * 2. call the carrier with the event's key; 3. record `completed` and the order's shipment id in one
 * batch, guarded by the record's etag, so an owner whose lease was taken over cannot overwrite.
 * On a record that exists: `completed` is a duplicate; a live lease held by another is a retry for
 * later; an expired lease (or our own earlier call that ended unknown) is reconciled by a look-up
 * before anyone calls again.
 */
export async function bookShipmentOnce(event: ShipmentEvent, ctx: ShipmentContext, caller: Caller): Promise<BookingResult> {
  let readFirst = true;
  for (let round = 1; round <= ctx.maxConcurrencyAttempts; round += 1) {
    const found = await findOrCreateRecord(event, ctx, caller, readFirst);
    // Reported to exist, then read as gone: create it again, without a read that would say the same.
    readFirst = found.kind !== 'vanished';
    if (found.kind === 'vanished') continue;
    if (found.kind === 'other-request') return otherRequest(found.existing.document, event);
    const settled = found.kind === 'committed' ? await callAsCreator(event, ctx, caller) : await continueFrom(found.existing, ctx, caller);
    if (settled !== 'lost-race') return settled;
  }
  return retry(`the shipment record kept changing: ${ctx.maxConcurrencyAttempts} rounds lost`);
}

/**
 * The event's record: read first (a redelivery finds it in one round trip), else created now under the
 * caller's lease, or, when someone else created it first (409), theirs, told apart by fingerprint.
 */
async function findOrCreateRecord(
  event: ShipmentEvent,
  ctx: ShipmentContext,
  caller: Caller,
  readFirst: boolean,
): Promise<CreateOrClassifyResult<ShipmentRecord>> {
  const isSame = (record: ShipmentRecord): boolean => record.requestFingerprint === event.fingerprint;
  const stored = readFirst ? await ctx.store.read<ShipmentRecord>(event.orderId, shipmentRecordId(event.key)) : undefined;
  if (stored) return classifyRecord(stored, isSame);
  const record = newShipmentRecord({
    ...event,
    idempotencyKey: event.key,
    requestFingerprint: event.fingerprint,
    owner: caller.owner,
    now: ctx.now(),
    leaseMs: ctx.leaseMs,
  });
  return createOrClassify(ctx.store, event.orderId, record, isSame);
}

/** The record this caller just created, read back for its etag, then the carrier called. */
async function callAsCreator(event: ShipmentEvent, ctx: ShipmentContext, caller: Caller): Promise<BookingResult | 'lost-race'> {
  const own = await ctx.store.read<ShipmentRecord>(event.orderId, shipmentRecordId(event.key));
  if (!own) return retry('the shipment record just created cannot be read back');
  return callCarrier(own, ctx, caller);
}

function otherRequest(record: ShipmentRecord, event: ShipmentEvent): BookingResult {
  const description = `shipment ${record.id} was started for another request under key ${JSON.stringify(event.key)}`;
  return { outcome: { kind: 'conflict', error: new PermanentMessageError('PayloadConflict', description, event.key) } };
}

/** What a record that already exists means for this caller. 'lost-race': read it again. */
export async function continueFrom(stored: VersionedDocument<ShipmentRecord>, ctx: ShipmentContext, caller: Caller): Promise<BookingResult | 'lost-race'> {
  const record = stored.document;
  switch (record.state) {
    case 'completed':
      return { outcome: { kind: 'duplicate' }, shipmentId: record.shipmentId, via: 'record' };
    case 'refused':
      return refusedOutcome(record);
    case 'escalated': {
      const description = `the booking under this key was escalated (${record.escalation?.reason ?? 'unresolved'}); resolve it with: npm run dlq -- shipments resolve ${record.orderId}`;
      return { outcome: { kind: 'invalid', error: new PermanentMessageError(shipmentFailure.ShipmentEscalated, description, record.idempotencyKey) } };
    }
    case 'in-progress':
      if (record.owner !== caller.owner && leaseIsLive(record, ctx.now())) {
        return retry(`another consumer (${record.owner}) holds the booking until ${record.leaseExpiresAt}`);
      }
      return reconcileThenCall(stored, ctx, caller);
  }
}

/**
 * An earlier call's outcome is unknown (its owner's lease ran out, or it was ours and ended without
 * an answer): ask the carrier by key first; call again, under the same key, only when it booked nothing.
 */
async function reconcileThenCall(stored: VersionedDocument<ShipmentRecord>, ctx: ShipmentContext, caller: Caller): Promise<BookingResult | 'lost-race'> {
  const record = stored.document;
  let known: Awaited<ReturnType<CarrierClient['lookup']>>;
  try {
    known = await ctx.carrier.lookup(record.idempotencyKey, caller.traceparent);
  } catch (error) {
    return unavailable(error);
  }
  if (known.kind === 'in-flight') return retry('the carrier is still handling an earlier request under this key');
  if (known.kind !== 'not-found') return settle(stored, known, 'lookup', ctx);
  if (record.owner === caller.owner) return callCarrier(stored, ctx, caller);
  const mine = takenOver(record, caller.owner, ctx.now(), ctx.leaseMs);
  const result = await ctx.store.commit(record.orderId, [replace(mine, stored.etag)]);
  if (result.kind === 'lost-race') return 'lost-race';
  if (result.kind !== 'committed') return retry(`taking the shipment lease over: ${result.kind}`);
  const own = await ctx.store.read<ShipmentRecord>(record.orderId, record.id);
  if (!own) return retry('the shipment record cannot be read back after the takeover');
  return callCarrier(own, ctx, caller);
}

async function callCarrier(stored: VersionedDocument<ShipmentRecord>, ctx: ShipmentContext, caller: Caller): Promise<BookingResult | 'lost-race'> {
  const record = stored.document;
  let answer: BookingAnswer;
  try {
    answer = await ctx.carrier.book({ idempotencyKey: record.idempotencyKey, shipment: record.request, traceparent: caller.traceparent });
  } catch (error) {
    return unavailable(error);
  }
  return settle(stored, answer, 'booking', ctx);
}

/**
 * Writes the carrier's answer, guarded by the etag the caller read: a record changed since (a takeover
 * by someone whose lease is now the live one, or their answer already written) is never overwritten.
 * One exception: a booking in hand is the carrier's fact under this key, so an escalation written
 * meanwhile (by a reconciler of an earlier release, which counted rounds against a lease it no longer
 * held) is settled over, once, and the order still gets its shipment id.
 */
export async function settle(
  stored: VersionedDocument<ShipmentRecord>,
  answer: BookingAnswer,
  via: 'booking' | 'lookup' | 'operator',
  ctx: ShipmentContext,
): Promise<BookingResult | 'lost-race'> {
  const settled = await writeAnswer(stored, answer, via, ctx);
  if (settled !== 'lost-race' || answer.kind !== 'booked' || via === 'operator') return settled;
  const current = await ctx.store.read<ShipmentRecord>(stored.document.orderId, stored.document.id);
  if (current?.document.state !== 'escalated') return 'lost-race';
  return writeAnswer(current, answer, via, ctx);
}

async function writeAnswer(
  stored: VersionedDocument<ShipmentRecord>,
  answer: BookingAnswer,
  via: 'booking' | 'lookup' | 'operator',
  ctx: ShipmentContext,
): Promise<BookingResult | 'lost-race'> {
  const record = stored.document;
  const now = ctx.now();
  if (answer.kind === 'refused') {
    const result = await ctx.store.commit(record.orderId, [replace(refused(record, answer.answer, answer.reason, now), stored.etag)]);
    if (result.kind === 'lost-race') return 'lost-race';
    if (result.kind !== 'committed') return retry(`recording the carrier's refusal: ${result.kind}`);
    return refusedOutcome({ ...record, refusal: { reason: answer.reason } });
  }
  for (let round = 1; round <= ctx.maxConcurrencyAttempts; round += 1) {
    const order = await ctx.store.read<OrderDocument>(record.orderId, orderDocumentId(record.orderId));
    if (!order) return retry(`order ${record.orderId} is not stored, so its shipment cannot be recorded on it`);
    const done = completed(record, answer.shipmentId, { ...answer.answer, via }, now);
    const operations = [replace(done, stored.etag)];
    if (order.document.shipmentId !== answer.shipmentId) operations.push(replace(withShipment(order.document, answer.shipmentId, now), order.etag));
    const result = await ctx.store.commit(record.orderId, operations);
    if (result.kind === 'committed') return { outcome: { kind: 'created' }, shipmentId: answer.shipmentId, via };
    if (result.kind === 'lost-race' && result.operationIndex === 0) return 'lost-race';
    if (result.kind !== 'lost-race') return retry(`recording the booking: ${result.kind}`);
    // The order changed meanwhile (a payment, a status): read it again; the record's etag still holds.
  }
  return retry(`order ${record.orderId} kept changing while its shipment was recorded`);
}

/**
 * The owner is handing the event back (a retry for later): it will not call again, so its lease is
 * ended now and the next delivery, or the reconciler, reconciles at once instead of waiting it out.
 * Best effort: if this write fails, the lease simply runs out.
 */
export async function releaseLease(ctx: ShipmentContext, orderId: string, idempotencyKey: string, owner: string): Promise<boolean> {
  const stored = await ctx.store.read<ShipmentRecord>(orderId, shipmentRecordId(idempotencyKey));
  if (!stored || stored.document.state !== 'in-progress' || stored.document.owner !== owner || !leaseIsLive(stored.document, ctx.now())) return false;
  const released: ShipmentRecord = { ...stored.document, leaseExpiresAt: ctx.now().toISOString(), updatedAt: ctx.now().toISOString() };
  return (await ctx.store.commit(orderId, [replace(released, stored.etag)])).kind === 'committed';
}

function refusedOutcome(record: ShipmentRecord): BookingResult {
  const description = `the carrier refused the shipment for order ${record.orderId}: ${record.refusal?.reason ?? 'no reason given'}`;
  return { outcome: { kind: 'invalid', error: new PermanentMessageError(shipmentFailure.CarrierRefused, description, record.idempotencyKey) } };
}

function unavailable(error: unknown): BookingResult {
  if (!(error instanceof CarrierUnavailableError)) throw error;
  return { outcome: { kind: 'retry', reason: error.message, cause: error } };
}

function retry(reason: string): BookingResult {
  return { outcome: { kind: 'retry', reason } };
}
