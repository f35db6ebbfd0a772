import { documentId } from '../idempotency/index.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import type { OrderStatusChanged, PaymentReceived } from './schemas.js';

/**
 * A payment or status change that arrived before its order, kept in the order's partition until the
 * order is stored. States:
 * - `parked`: waiting; applied by whoever stores the order (or sees the order first);
 * - `applied`: its effect is on the order (a payment also has its inbox marker); expires by TTL;
 * - `rejected`: it can never be applied as it stands (`OrderNeverArrived`, `CurrencyMismatch`);
 *   listed by the dead-letter tool, which can resubmit or discard it;
 * - `resubmitting`: a rejected item a `parked resubmit` run claimed before sending its copy, so a
 *   discard can no longer commit while that copy may be on its way; for the flows it is as rejected
 *   (not waiting, not applied: a copy arriving parks it afresh); keeps the rejection and its TTL;
 * - `resubmitted`, `discarded`: an operator's decision on a rejected item; expires by TTL.
 */
export type ParkedItemState = 'parked' | 'applied' | 'rejected' | 'resubmitting' | 'resubmitted' | 'discarded';

export type ParkedMessageType = 'PaymentReceived' | 'OrderStatusChanged';

export interface ParkedItemDocument {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'parked';
  readonly state: ParkedItemState;
  readonly messageType: ParkedMessageType;
  readonly messageId?: string;
  readonly dedupKey: string;
  readonly fingerprint: string;
  readonly payload: PaymentReceived | OrderStatusChanged;
  /** The body as received, as JSON text, when it carried fields the schema ignores: what a resubmit sends. */
  readonly receivedJson?: string;
  /** Set on a payment parked after its paymentId was claimed; absent on items of releases before claims. */
  readonly claimed?: boolean;
  /** When it was (last) parked: the sweeper's horizon counts from here. */
  readonly parkedAt: string;
  readonly appliedAt?: string;
  /** For a status change applied behind a higher version. */
  readonly appliedAs?: 'status' | 'stale' | 'payment';
  readonly rejection?: { readonly reason: string; readonly description: string; readonly rejectedAt: string };
  /** Set by the `parked resubmit` run that claimed the item (`resubmitting`): when, and which run. */
  readonly resubmitClaim?: { readonly claimedAt: string; readonly run: string };
  readonly ttl?: number;
}

/**
 * The order's arrival gate, one per order. A parker opens it in the batch that parks; the OrderPlaced
 * batch creates it closed. So whichever comes second finds it (409), and every later change to it is
 * etag-guarded: an item is either parked before the order's batch (and applied by it) or finds the
 * order stored, never parked after and forgotten.
 */
export interface ParkingLotDocument {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'parking-lot';
  readonly state: 'open' | 'closed';
  readonly changedAt: string;
  /**
   * Set on a lot this release opened: every payment parked under it claimed its paymentId first.
   * Absent on a lot a release before claims opened (kept absent when it is replaced): its parked
   * payments may have no claim, so a payment's copy looks for them (paymentsBeforeClaims.ts).
   */
  readonly claimedPaymentsOnly?: boolean;
  readonly ttl?: number;
}

/**
 * A payment is parked under its dedup key, like its inbox marker: the key its paymentId's claim
 * records, so a copy under another MessageId meets the first one's item (receivePayment.ts). A status change is parked under
 * its version: the version is what an order's status is compared by, so two payloads at one version
 * meet here as a conflict, exactly as they would on a stored order.
 */
export function parkedItemId(message: ParsedOrderMessage): string {
  if (message.type === 'OrderStatusChanged') return documentId('parked', 'status', String(message.payload.version));
  return parkedPaymentId(message.key.value);
}

/** Where a payment parked under this dedup key is (a claim names the key; paymentClaims.ts looks there). */
export const parkedPaymentId = (dedupKey: string): string => documentId('parked', 'payment', dedupKey);

export const parkingLotId = (orderId: string): string => documentId('parking-lot', orderId);

/**
 * Every state has a time-to-live (Cosmos DB counts it from the last write): a waiting item outlives
 * its horizon (a start-up rule, src/idempotency/retention.ts), so the sweeper rejects it before it
 * could expire unseen, and the rejection's own write starts a fresh TTL for the operators.
 */
export function newParkedItem(message: ParsedOrderMessage, parkedAt: string, ttl: number): ParkedItemDocument {
  if (!isParkable(message)) throw new TypeError(`${message.type} is never parked: it has no order to wait for`);
  return {
    id: parkedItemId(message),
    orderId: message.payload.orderId,
    docType: 'parked',
    state: 'parked',
    messageType: message.type,
    messageId: message.messageId,
    dedupKey: message.key.value,
    fingerprint: message.fingerprint,
    payload: message.payload,
    ...(message.receivedPayload === undefined ? {} : { receivedJson: JSON.stringify(message.receivedPayload) }),
    ...(message.type === 'PaymentReceived' ? { claimed: true } : {}),
    parkedAt,
    ttl,
  };
}

/** The item in another state, typed, so a misspelt field fails to compile. */
export function withState(item: ParkedItemDocument, change: Partial<Omit<ParkedItemDocument, 'id' | 'orderId' | 'docType'>>): ParkedItemDocument {
  return { ...item, ...change };
}

export function parkingLot(
  orderId: string,
  state: ParkingLotDocument['state'],
  changedAt: string,
  ttl?: number,
  claimedPaymentsOnly?: boolean,
): ParkingLotDocument {
  return {
    id: parkingLotId(orderId),
    orderId,
    docType: 'parking-lot',
    state,
    changedAt,
    ...(ttl === undefined ? {} : { ttl }),
    ...(claimedPaymentsOnly ? { claimedPaymentsOnly } : {}),
  };
}

export function isParkable(message: ParsedOrderMessage): message is ParsedOrderMessage & { readonly type: ParkedMessageType } {
  return message.type === 'PaymentReceived' || message.type === 'OrderStatusChanged';
}
