import { documentId } from '../idempotency/index.js';
import { callerScope, sharedCaller } from './intakeCaller.js';
import type { IntakeCaller } from './intakeCaller.js';
import type { IntakeResponse } from './intakeResponse.js';

/**
 * The idempotency key's own record, in a partition of its own (the key, not the order, names it),
 * so that one key reused for two different orders is caught by the store, not by a search. It
 * holds the request's fingerprint, whether it is still being handled and, once it is not, the
 * response to replay. It expires after the documented retention.
 */
export interface IntakeKeyRecord {
  readonly id: string;
  /** The container's partition key: the record's own id. */
  readonly orderId: string;
  readonly docType: 'intake-key';
  readonly idempotencyKey: string;
  /** The caller whose key it is (`entra:<object id>`); absent in the shared scope, as in earlier releases. */
  readonly caller?: string;
  readonly fingerprint: string;
  /** The order the request named: where its claim and outbox entry are. */
  readonly requestOrderId: string;
  readonly state: 'in-progress' | 'completed';
  /** The invocation handling it; another may take over once the lease has expired. */
  readonly owner: string;
  readonly attempt: number;
  readonly leaseExpiresAt: string;
  readonly createdAt: string;
  readonly completedAt?: string;
  readonly response?: IntakeResponse;
  readonly ttl: number;
}

/**
 * The order's intake claim, in the order's partition, written in one batch with the OrderPlaced
 * outbox entry: the claim exists if and only if the event will be published. Its fixed id makes
 * the store refuse a second claim for the order, whichever key it comes with. It lives as long as
 * the order, so a retry long after the key record has expired still gets the stored response.
 */
export interface OrderIntakeClaim {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'intake';
  readonly idempotencyKey: string;
  /** The caller the order belongs to (`entra:<object id>`); absent in the shared scope, as in earlier releases. */
  readonly caller?: string;
  readonly fingerprint: string;
  readonly response: IntakeResponse;
  readonly acceptedAt: string;
}

/**
 * `intake-key|<key>` in the shared scope: the id earlier releases wrote, so their records are
 * found. `intake-key|<caller>|<key>` for a principal: an escaped key holds no `|`, so the two
 * forms never meet, and documentId hashes either past 255 characters (bounded by the key's 255
 * and the principal id's 128).
 */
export function intakeKeyRecordId(idempotencyKey: string, caller: IntakeCaller = sharedCaller): string {
  const scope = callerScope(caller);
  return scope === undefined ? documentId('intake-key', idempotencyKey) : documentId('intake-key', scope, idempotencyKey);
}
export const orderIntakeClaimId = (orderId: string): string => documentId('intake', orderId);
export const orderPlacedOutboxId = (orderId: string): string => documentId('outbox', 'OrderPlaced', orderId);

export function leaseIsLive(record: IntakeKeyRecord, now: Date): boolean {
  return Date.parse(record.leaseExpiresAt) > now.getTime();
}
