import { firstDelivery, pauseAfterLostRace } from '../consumer/index.js';
import type { DeliveryHistory } from '../consumer/index.js';
import { PermanentMessageError, create, createOrClassify, replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { outcomeOf, sameRequestAs } from './duplicateOrConflict.js';
import { orderFailure } from './failureCodes.js';
import { inboxMarkerId, newPaymentMarker, orderDocumentId, paymentCurrencyMismatch, paymentOutOfRange, withPayment } from './documents.js';
import type { InboxMarkerDocument, OrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import { claimPayment } from './paymentClaims.js';
import type { PaymentMessage } from './paymentClaims.js';
import { findPaymentStoredWithoutClaim } from './paymentsBeforeClaims.js';
import { orderArrived, parkUntilOrderArrives } from './parkEarlyArrival.js';
import { isSameRequest } from './sameRequest.js';

/**
 * PaymentReceived adds to `amountPaid`, so applying it twice would count the money twice. Its
 * `paymentId` is claimed first (paymentClaims.ts): a copy under another MessageId goes on under the
 * key of the message that claimed it, and one naming another order or amount is a conflict. Then
 * the inbox marker and the order change go in one batch: either both exist or neither, so the
 * marker's 409 proves the payment was counted. The replace is guarded by the etag read just before;
 * a 412 means another message changed the order in between, and we read again. A payment whose
 * order is not stored yet is parked (parkEarlyArrival.ts) under the same key, and applied when the
 * order comes.
 *
 *   claim (its own partition)        effect (the order's partition, one batch)
 *   create #payment|P  --  dies? -->  the redelivery finds its own claim and applies the effect
 *                      --  a copy?  ->  it applies the effect under the claimer's key; whichever
 *                                       batch comes second finds the marker: a duplicate
 */
export async function applyPaymentOnce(message: PaymentMessage, ctx: FlowContext, delivery: DeliveryHistory = firstDelivery): Promise<ProcessingOutcome> {
  if (delivery.previousAttemptMayHaveWritten && (await appliedUnderItsOwnKey(message, ctx))) return { kind: 'duplicate' };
  const orderId = message.payload.orderId;
  let claimed: PaymentMessage | undefined;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const current = await ctx.store.read<OrderDocument>(orderId, orderDocumentId(orderId));
    const otherCurrency = current && paymentCurrencyMismatch(current.document, message.payload);
    if (otherCurrency !== undefined)
      return { kind: 'invalid', error: new PermanentMessageError(orderFailure.CurrencyMismatch, otherCurrency, message.key.value) };
    // Asked again on every round, not only before the claim: an instance of the release before claims
    // may have stored the payment (under another key, without a claim) since our last read, which is
    // what a 412 or the order's arrival while we parked can mean.
    const storedWithoutClaim = await findPaymentStoredWithoutClaim(message, current?.document, ctx);
    if (storedWithoutClaim) return storedWithoutClaim;
    if (!claimed) {
      const decided = await claimAndDecide(message, ctx, current === undefined);
      if (!('payload' in decided)) return decided;
      claimed = decided;
    }
    if (!current) {
      // The OrderPlaced is still on its way: keep the payment until it comes, and complete this message.
      const parked = await parkUntilOrderArrives(claimed, ctx, () => findPaymentStoredWithoutClaim(message, undefined, ctx));
      if (parked === orderArrived) continue;
      return parked;
    }
    const outOfRange = paymentOutOfRange(current.document, message.payload);
    if (outOfRange !== undefined) {
      // The payment's own effect may be what filled the order: a copy of a counted payment (under
      // the claimer's key, whatever its own) is a duplicate, never refused and dead-lettered as if lost.
      if (await appliedUnderItsOwnKey(claimed, ctx)) return { kind: 'duplicate' };
      return { kind: 'invalid', error: new PermanentMessageError(orderFailure.AmountOutOfRange, outOfRange, message.key.value) };
    }
    const marker = newPaymentMarker(
      { ...claimed, orderId: claimed.payload.orderId, dedupKey: claimed.key.value },
      ctx.now().toISOString(),
      ctx.markerTtlSeconds,
    );
    const decision = await createOrClassify(
      ctx.store,
      orderId,
      [create(marker), replace(withPayment(current.document, message.payload, true), current.etag)],
      sameRequestAs(claimed),
    );
    if (decision.kind === 'committed') return { kind: 'created' };
    if (decision.kind !== 'not-committed') return outcomeOf(claimed, decision, ctx);
    await pauseAfterLostRace(attempt, ctx);
  }
  return { kind: 'retry', reason: `order ${orderId} changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}

/**
 * A delivery that may follow an attempt that wrote reads its own inbox marker first: the marker and
 * the order change are one batch, so a marker of the same request proves the payment counted, and
 * the message is a duplicate in one round trip. Nothing else is decided here: no marker (the attempt
 * died before its effect, the payment was applied under the key of a copy that claimed it, or it is
 * parked) and another payload under this key go the whole way, so a redelivery is decided as its
 * first delivery was (a currency, an amount or a claim can refuse it before any marker is compared).
 */
async function appliedUnderItsOwnKey(message: PaymentMessage, ctx: FlowContext): Promise<boolean> {
  const marker = await ctx.store.read<InboxMarkerDocument>(message.payload.orderId, inboxMarkerId(message.key.value));
  return marker !== undefined && isSameRequest(message, marker.document.fingerprint);
}

async function claimAndDecide(message: PaymentMessage, ctx: FlowContext, toBeParked: boolean): Promise<PaymentMessage | ProcessingOutcome> {
  const claim = await claimPayment(message, ctx, { renew: toBeParked });
  return claim.kind === 'apply' ? claim.message : claim.outcome;
}
