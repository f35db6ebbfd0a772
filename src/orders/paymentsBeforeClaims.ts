import { consumerKeyPrefix } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { recordConflict } from './duplicateOrConflict.js';
import type { InboxMarkerDocument, OrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import type { PaymentMessage } from './paymentClaims.js';
import { parkingLotId } from './parkedItems.js';
import type { ParkedItemDocument, ParkingLotDocument } from './parkedItems.js';
import { isSameAsParked, isSamePayment, isSameRequest } from './sameRequest.js';
import type { PaymentReceived } from './schemas.js';

/**
 * Releases before payment claims applied a payment under the message's dedup key alone: an inbox
 * marker (or a parked item) and no claim. During the markers' lifetime after the deploy, a copy of
 * such a payment under a new MessageId would find no claim, take one, and be counted again. So,
 * before claiming, the order's partition is asked for a payment with the same `paymentId` stored
 * without a claim, and only where one can be:
 * - a stored order counts the payments applied with a claim (`claimedPaymentCount`); when that is
 *   less than `paymentCount`, its inbox markers of payments are read (one query in its partition);
 * - for an order not stored yet, its arrival gate is read (a point read): only a gate a release
 *   before claims opened (unmarked) can have payments without a claim, and only then are its parked
 *   payments read (one query in its partition).
 * A payment found there decides the message with no write: the same message again, or the same
 * payment under another key, is a duplicate; another payload is a conflict. It is asked on every
 * round of the message (receivePayment.ts), not only before the claim: an instance of that release
 * may store the payment between our read of the order and our batch. The query can go one marker
 * TTL after every instance runs a release with claims.
 *
 * Only what this consumer stored counts: consumers with other names (CONSUMER_NAME) sharing the
 * container apply the same payment each once, under their own keys, and a marker or parked item of
 * theirs found here is no sign this consumer counted it (taken for one, its payment was lost).
 */
export async function findPaymentStoredWithoutClaim(
  message: PaymentMessage,
  order: OrderDocument | undefined,
  ctx: FlowContext,
): Promise<ProcessingOutcome | undefined> {
  if (order) return order.paymentCount > (order.claimedPaymentCount ?? 0) ? findInMarkers(message, ctx) : undefined;
  return findInParked(message, ctx);
}

async function findInMarkers(message: PaymentMessage, ctx: FlowContext): Promise<ProcessingOutcome | undefined> {
  // Filtered on docType alone (indexed; messageType is not): only payments leave inbox markers.
  const markers = await ctx.store.find<InboxMarkerDocument>({ docType: 'inbox', partitionKey: message.payload.orderId });
  const marker = markers
    .map((m) => m.document)
    .find((m) => m.messageType === 'PaymentReceived' && isOwnKey(m.dedupKey, ctx) && m.payload?.paymentId === message.payload.paymentId);
  if (!marker) return undefined;
  const same = marker.dedupKey === message.key.value ? isSameRequest(message, marker.fingerprint) : isSamePayment(message.payload, marker.payload);
  return same ? { kind: 'duplicate' } : recordConflict(message, marker, ctx, `payment ${message.payload.paymentId} was applied under key ${marker.dedupKey}`);
}

/**
 * A parked item of the release before: under this message's key, a redelivery (decided here, so it
 * writes no claim, as the release before wrote none); under another key, a copy of the payment.
 */
async function findInParked(message: PaymentMessage, ctx: FlowContext): Promise<ProcessingOutcome | undefined> {
  // One point read spares the query (and a flood of parked payments for one order its growing cost):
  // nothing parked at all, or a lot this release opened, holds no payment without a claim.
  const lot = await ctx.store.read<ParkingLotDocument>(message.payload.orderId, parkingLotId(message.payload.orderId));
  if (!lot || lot.document.claimedPaymentsOnly === true) return undefined;
  const items = await ctx.store.find<ParkedItemDocument>({ docType: 'parked', partitionKey: message.payload.orderId });
  const item = items
    .map((i) => i.document)
    .find((i) => i.messageType === 'PaymentReceived' && i.claimed !== true && isOwnKey(i.dedupKey, ctx) && isLiveCopyOf(message, i));
  if (!item) return undefined;
  const same = isSameAsParked(message, item) || (item.dedupKey !== message.key.value && isSamePayment(message.payload, item.payload as PaymentReceived));
  return same ? { kind: 'duplicate' } : recordConflict(message, item, ctx, `payment ${message.payload.paymentId} is parked under key ${item.dedupKey}`);
}

/** Waiting or applied (or, under this key, discarded by an operator); a rejected (or `resubmitting`) item is parked afresh by its resubmit. */
function isLiveCopyOf(message: PaymentMessage, item: ParkedItemDocument): boolean {
  if (item.dedupKey === message.key.value) return item.state === 'parked' || item.state === 'applied' || item.state === 'discarded';
  return (item.state === 'parked' || item.state === 'applied') && (item.payload as PaymentReceived).paymentId === message.payload.paymentId;
}

/**
 * A key this consumer resolved: under its name's prefix. Without a name every key counts (a key with
 * no prefix cannot be told from another consumer's: `a|b` is a CloudEvent's `source|id` and consumer
 * a's `b`), and so does a record without a key: taken for ours, it can only make a duplicate, never a second effect.
 */
function isOwnKey(dedupKey: string | undefined, ctx: Pick<FlowContext, 'consumerName'>): boolean {
  return dedupKey === undefined || dedupKey.startsWith(consumerKeyPrefix(ctx.consumerName));
}
