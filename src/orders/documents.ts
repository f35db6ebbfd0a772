import { documentId } from '../idempotency/index.js';
import { newOutboxDocument } from '../outbox/index.js';
import type { OutboxDocument } from '../outbox/index.js';
import { addMoney, isExactAmount, maxExactAmount, multiplyMoney } from './money.js';
import type { OrderMessageType, OrderPlaced, OrderStatus, OrderStatusChanged, PaymentReceived } from './schemas.js';

interface Processed {
  readonly messageId?: string;
  readonly dedupKey: string;
  readonly fingerprint: string;
  readonly processedAt: string;
}

export interface OrderDocument extends Processed {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'order';
  readonly customerId: string;
  readonly currency: string;
  readonly lines: OrderPlaced['lines'];
  readonly total: number;
  readonly placedAt: string;
  readonly status: OrderStatus;
  /** 0 until the first OrderStatusChanged; only a higher version replaces the status. */
  readonly statusVersion: number;
  readonly statusChangedAt?: string;
  /** Fingerprint and MessageId of the status change at `statusVersion`: another payload at the same version is a conflict. */
  readonly statusFingerprint?: string;
  readonly statusMessageId?: string;
  /**
   * The fingerprints of the last `statusHistoryLength` versions applied (version -> fingerprint), so
   * another status sent later under an older version is told from a late copy of the one applied.
   * Absent on orders stored before it was kept: older versions are then only stale.
   */
  readonly statusHistory?: Readonly<Record<string, string>>;
  readonly amountPaid: number;
  readonly paymentCount: number;
  /**
   * How many of `paymentCount` were applied with a payment claim (paymentClaims.ts). Absent on orders
   * stored before claims (all their payments were applied without one); fewer than `paymentCount`
   * tells a payment's copy to look for an earlier one in the order's markers (paymentsBeforeClaims.ts).
   */
  readonly claimedPaymentCount?: number;
  /** Set with the shipment record's `completed` state, in the same batch (src/shipments). */
  readonly shipmentId?: string;
  readonly shipmentBookedAt?: string;
}

/** Proof that a non-idempotent message was applied; expires after the retention period. */
export interface InboxMarkerDocument extends Processed {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'inbox';
  readonly messageType: OrderMessageType;
  /** The payment as applied: an operator comparing a conflicting copy needs more than a fingerprint. */
  readonly payload?: PaymentReceived;
  readonly ttl: number;
}

export interface ConflictDocument {
  readonly id: string;
  readonly orderId: string;
  readonly docType: 'conflict';
  readonly dedupKey: string;
  readonly messageType: OrderMessageType;
  readonly incoming: { readonly messageId?: string; readonly fingerprint: string };
  readonly existing: { readonly messageId?: string; readonly fingerprint: string; readonly documentId: string };
  readonly detectedAt: string;
  /** Seconds; records written before it was set have none and stay until deleted. */
  readonly ttl?: number;
}

/**
 * Every document lives in the orders container, partitioned by `orderId`, and says what it is in
 * `docType`. Ids other than the order's carry a namespace and `|`, which an order id may not
 * contain, so an inbox marker keyed by a MessageId equal to the order id can never collide with it.
 */
export const orderDocumentId = (orderId: string): string => orderId;
export const outboxDocumentId = (orderId: string): string => documentId('outbox', 'OrderAccepted', orderId);
export const inboxMarkerId = (dedupKey: string): string => documentId('inbox', dedupKey);
export const conflictDocumentId = (dedupKey: string, incomingFingerprint: string): string => documentId('conflict', dedupKey, incomingFingerprint);

/** A payment as its inbox marker records it: the message's own, or that of the item it was parked as. */
export interface CountedPayment {
  readonly orderId: string;
  readonly messageId?: string;
  readonly dedupKey: string;
  readonly fingerprint: string;
  readonly payload: PaymentReceived;
}

/** The marker written in the batch that counts the payment: its 409 on a later copy proves the payment counted. */
export function newPaymentMarker(payment: CountedPayment, processedAt: string, ttl: number): InboxMarkerDocument {
  return {
    id: inboxMarkerId(payment.dedupKey),
    orderId: payment.orderId,
    docType: 'inbox',
    messageType: 'PaymentReceived',
    messageId: payment.messageId,
    dedupKey: payment.dedupKey,
    fingerprint: payment.fingerprint,
    processedAt,
    payload: payment.payload,
    ttl,
  };
}

export function newOrderDocument(order: OrderPlaced, processed: Processed): OrderDocument {
  return {
    id: orderDocumentId(order.orderId),
    orderId: order.orderId,
    docType: 'order',
    customerId: order.customerId,
    currency: order.currency,
    lines: order.lines,
    total: addMoney(...order.lines.map((line) => multiplyMoney(line.unitPrice, line.quantity))),
    placedAt: order.placedAt,
    status: 'Accepted',
    statusVersion: 0,
    amountPaid: 0,
    paymentCount: 0,
    claimedPaymentCount: 0,
    ...processed,
  };
}

/** The event other services act on, written in the order's own batch: `publishOutbox` sends it. */
export function newOrderAcceptedOutbox(order: OrderDocument, destination: string, traceparent?: string): OutboxDocument {
  return newOutboxDocument({
    id: outboxDocumentId(order.orderId),
    orderId: order.orderId,
    eventType: 'OrderAccepted',
    destination,
    body: { orderId: order.orderId, customerId: order.customerId, currency: order.currency, total: order.total, placedAt: order.placedAt },
    causationMessageId: order.messageId,
    createdAt: order.processedAt,
    traceparent,
  });
}

/** How many applied status versions an order remembers: a bound on the document's growth. */
export const statusHistoryLength = 16;

/** The order at a newer status version, the version's fingerprint remembered. */
export function withStatus(
  order: OrderDocument,
  change: OrderStatusChanged,
  applied: { readonly fingerprint: string; readonly messageId?: string },
): OrderDocument {
  const history = Object.entries({ ...order.statusHistory, [String(change.version)]: applied.fingerprint })
    .sort(([a], [b]) => Number(b) - Number(a))
    .slice(0, statusHistoryLength);
  return {
    ...order,
    status: change.status,
    statusVersion: change.version,
    statusChangedAt: change.changedAt,
    statusFingerprint: applied.fingerprint,
    statusMessageId: applied.messageId,
    statusHistory: Object.fromEntries(history),
  };
}

/** The fingerprint the order remembers for a status version it applied, if it still does. */
export function appliedStatusFingerprint(order: OrderDocument, version: number): string | undefined {
  if (version === order.statusVersion && order.statusFingerprint !== undefined) return order.statusFingerprint;
  return order.statusHistory?.[String(version)];
}

/** Why the payment cannot be counted on the order, if it is in another currency than the order's. */
export function paymentCurrencyMismatch(order: OrderDocument, payment: Pick<PaymentReceived, 'currency'>): string | undefined {
  if (payment.currency === order.currency) return undefined;
  return `PaymentReceived.currency ${payment.currency} differs from order ${order.orderId}'s ${order.currency}`;
}

/**
 * Why the payment cannot be counted on the order, if it cannot: each payment is bounded (schemas.ts),
 * but their number is not, and `amountPaid` must stay an exact sum.
 */
export function paymentOutOfRange(order: OrderDocument, payment: Pick<PaymentReceived, 'amount'>): string | undefined {
  if (isExactAmount(addMoney(order.amountPaid, payment.amount))) return undefined;
  return `PaymentReceived.amount ${payment.amount} would take order ${order.orderId}'s amountPaid (${order.amountPaid}) past ${maxExactAmount}, beyond which sums are not exact`;
}

/** The order with the payment counted; `claimed` when its paymentId was claimed first (every payment this release applies). */
export function withPayment(order: OrderDocument, payment: PaymentReceived, claimed: boolean): OrderDocument {
  const claimedPaymentCount = (order.claimedPaymentCount ?? 0) + (claimed ? 1 : 0);
  return { ...order, amountPaid: addMoney(order.amountPaid, payment.amount), paymentCount: order.paymentCount + 1, claimedPaymentCount };
}

/** The order with its shipment booked: written by src/shipments in the batch that completes the shipment record. */
export function withShipment(order: OrderDocument, shipmentId: string, bookedAt: Date): OrderDocument {
  return { ...order, shipmentId, shipmentBookedAt: bookedAt.toISOString() };
}
