import { documentId } from '../idempotency/index.js';
import type { CarrierAnswer, ShipmentRequest } from './carrierClient.js';

export type ShipmentState = 'in-progress' | 'completed' | 'refused' | 'escalated';

/**
 * The two-phase record of one booking, in the order's partition: created `in-progress` before the
 * carrier is called (so a 409 on the create means someone has or had the booking), then `completed`
 * with the carrier's answer in one batch with the order's shipment id, or `refused` with the
 * carrier's reason. Whoever holds `owner` until `leaseExpiresAt` may call; anyone else waits, and
 * after expiry reconciles with the carrier before calling again under the same key.
 */
export interface ShipmentRecord {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'shipment';
  /** The event's dedup key: the record's identity and the Idempotency-Key the carrier sees. */
  readonly idempotencyKey: string;
  readonly messageId?: string;
  readonly request: ShipmentRequest;
  readonly requestFingerprint: string;
  readonly state: ShipmentState;
  /** Who may call the carrier now: one invocation, or the reconciler's run. */
  readonly owner: string;
  /** Calls made or taken over under this key; 1 for the first owner. */
  readonly attempt: number;
  readonly leaseExpiresAt: string;
  /**
   * Reconciler rounds that found the carrier answering without settling the record (a request
   * still in flight), counted against one lease only: a takeover starts them again. At the limit
   * the record is escalated. A carrier that cannot be reached is not counted here.
   */
  readonly reconcileAttempts: number;
  /**
   * The attempt (the lease) `reconcileAttempts` were counted against. A reconciler that finds
   * another attempt starts the count again, so a takeover written by any version of this code
   * resets it. Absent in records written before it existed: the count is then taken as it stands.
   */
  readonly reconcileAttemptsAgainst?: number;
  /**
   * When the last of `reconcileAttempts` was counted. Another round counts only a lease after it, so
   * rounds measure time in flight, not how often reconcilers run. Absent in records written before
   * it existed: the next round counts.
   */
  readonly lastReconcileRoundAt?: string;
  /**
   * When a reconciler round first found the carrier unreachable (or holding no answer under the
   * key). Rounds like that count against the transient retry budget from here, not against
   * `reconcileAttempts`; takeovers keep it, so an outage has an end. Absent: no such round yet.
   */
  readonly carrierUnreachableSince?: string;
  readonly startedAt: string;
  readonly updatedAt: string;
  readonly shipmentId?: string;
  readonly answer?: CarrierAnswer & { readonly via: 'booking' | 'lookup' | 'operator' };
  readonly refusal?: { readonly reason: string };
  readonly escalation?: { readonly reason: string; readonly at: string };
  /** The last failure that left the record in progress: what the operator sees on escalation. */
  readonly lastError?: string;
}

export const shipmentRecordId = (idempotencyKey: string): string => documentId('shipment', idempotencyKey);

export function newShipmentRecord(fields: {
  orderId: string;
  idempotencyKey: string;
  messageId?: string;
  request: ShipmentRequest;
  requestFingerprint: string;
  owner: string;
  now: Date;
  leaseMs: number;
}): ShipmentRecord {
  const at = fields.now.toISOString();
  return {
    id: shipmentRecordId(fields.idempotencyKey),
    orderId: fields.orderId,
    docType: 'shipment',
    idempotencyKey: fields.idempotencyKey,
    messageId: fields.messageId,
    request: fields.request,
    requestFingerprint: fields.requestFingerprint,
    state: 'in-progress',
    owner: fields.owner,
    attempt: 1,
    leaseExpiresAt: new Date(fields.now.getTime() + fields.leaseMs).toISOString(),
    reconcileAttempts: 0,
    startedAt: at,
    updatedAt: at,
  };
}

export function leaseIsLive(record: ShipmentRecord, now: Date): boolean {
  return Date.parse(record.leaseExpiresAt) > now.getTime();
}

/** A new owner, the next attempt, a fresh lease, and no reconcile rounds: those were the previous owner's. */
export function takenOver(record: ShipmentRecord, owner: string, now: Date, leaseMs: number): ShipmentRecord {
  const attempt = record.attempt + 1;
  return {
    ...record,
    owner,
    attempt,
    leaseExpiresAt: new Date(now.getTime() + leaseMs).toISOString(),
    reconcileAttempts: 0,
    reconcileAttemptsAgainst: attempt,
    updatedAt: now.toISOString(),
  };
}

/** The same owner under the same lease: nobody took the record over or released it between two reads. */
export function sameLease(a: ShipmentRecord, b: ShipmentRecord): boolean {
  return a.owner === b.owner && a.attempt === b.attempt && a.leaseExpiresAt === b.leaseExpiresAt;
}

/** Rounds counted against this record's current attempt: those counted against an earlier one do not carry over. */
export function roundsAgainstCurrentAttempt(record: ShipmentRecord): number {
  return record.reconcileAttemptsAgainst === undefined || record.reconcileAttemptsAgainst === record.attempt ? record.reconcileAttempts : 0;
}

export function completed(record: ShipmentRecord, shipmentId: string, answer: ShipmentRecord['answer'], now: Date): ShipmentRecord {
  return { ...record, state: 'completed', shipmentId, answer, escalation: undefined, updatedAt: now.toISOString() };
}

export function refused(record: ShipmentRecord, answer: CarrierAnswer, reason: string, now: Date): ShipmentRecord {
  return { ...record, state: 'refused', answer: { ...answer, via: 'booking' }, refusal: { reason }, updatedAt: now.toISOString() };
}
