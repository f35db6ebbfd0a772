import { createOrClassify, documentId, readAndClassify, replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { recordConflict } from './duplicateOrConflict.js';
import { inboxMarkerId, orderDocumentId, paymentCurrencyMismatch, paymentOutOfRange } from './documents.js';
import type { OrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { isSamePayment, isSameRequest } from './sameRequest.js';
import type { PaymentReceived } from './schemas.js';

export type PaymentMessage = ParsedOrderMessage & { readonly payload: PaymentReceived };

/**
 * A payment's business identity, claimed before its effect: one per `paymentId` (per consumer),
 * whichever MessageId or order a copy names. It lives in its own logical partition of the orders
 * container (the container is partitioned on /orderId, and a partition key is only a value), so a
 * claim is one create of a small document, with no transaction across it and the order: the effect
 * (inbox marker + order, one batch) is itself idempotent, under the key the claim records.
 */
export interface PaymentClaimDocument {
  readonly id: string;
  /** The claim's own partition, `#payment|<paymentId>`: `#` is never in an order id. */
  readonly orderId: string;
  readonly docType: 'payment-claim';
  readonly paymentId: string;
  /** The order the payment was claimed for: a copy naming another order is a conflict. */
  readonly paymentOrderId: string;
  readonly amount: number;
  readonly currency: string;
  /** The dedup key the effect is stored under (inbox marker, parked item), whatever key a copy has. */
  readonly dedupKey: string;
  /** The fingerprint of the message that claimed it: what the effect's marker holds. */
  readonly fingerprint: string;
  readonly messageId?: string;
  readonly claimedAt: string;
  readonly ttl: number;
}

/** Where a payment's claim is: the partition and the id, from the paymentId (and the consumer's name). */
function paymentClaimLocation(paymentId: string, consumerName?: string): { readonly partitionKey: string; readonly id: string } {
  const id = consumerName ? documentId('payment', consumerName, paymentId) : documentId('payment', paymentId);
  return { partitionKey: `#${id}`, id };
}

/**
 * The claim outlives the marker of its effect: a payment may wait parked for its order (the parked
 * horizon, at most the marker TTL by the retention check) before the marker's TTL even starts. A
 * parked item can wait more than one horizon (rejected OrderNeverArrived, resubmitted or met by a late
 * copy, parked afresh, again and again), so every parking under a claim written before writes it again
 * (`renew`): Cosmos DB counts a TTL from the last write, and the claim then lives one horizon plus one
 * marker retention past the item's last parking, however many rounds it took.
 */
const claimTtlSeconds = (markerTtlSeconds: number): number => 2 * markerTtlSeconds;

export type PaymentClaimDecision =
  /** Apply this message (or find it applied) under the key the claim records: its own or the first copy's. */
  { readonly kind: 'apply'; readonly message: PaymentMessage } | { readonly kind: 'decided'; readonly outcome: ProcessingOutcome };

/**
 * Creates the payment's claim or, if there is one (409), decides against it: the message that
 * claimed it, again, goes on to its effect; a copy under another key, for the same order, amount
 * and currency, goes on as that message (its key and fingerprint), so its effect meets the
 * claimer's: whichever of the two gets there first applies it, the other finds the marker and is a
 * duplicate; a copy naming another order, amount or currency, or another payload under the
 * claimer's own key, is a conflict, recorded and dead-lettered.
 */
export async function claimPayment(
  message: PaymentMessage,
  ctx: FlowContext,
  /** The message is about to be parked: a claim it goes on under is written again, so it outlives the item (claimTtlSeconds). */
  options: { readonly renew?: boolean } = {},
): Promise<PaymentClaimDecision> {
  const claim = newPaymentClaim(message, ctx);
  const isSame = (stored: PaymentClaimDocument): boolean => sameRequestOrCopy(message, stored);
  const created = await createOrClassify(ctx.store, claim.orderId, claim, isSame);
  if (created.kind === 'committed') return { kind: 'apply', message };
  let decision = created;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    // The first round decides on what the create's 409 read; a lost takeover reads the claim again.
    if (attempt > 1) decision = await readAndClassify(ctx.store, claim.orderId, claim.id, isSame);
    if (decision.kind === 'vanished')
      return { kind: 'decided', outcome: { kind: 'retry', reason: `payment claim ${claim.id} was reported to exist but could not be read` } };
    const existing = decision.existing;
    if (decision.kind === 'same-request') {
      if (!options.renew) return { kind: 'apply', message: underTheClaim(message, existing.document) };
      const again: PaymentClaimDocument = { ...existing.document, ttl: claim.ttl };
      const renewed = await ctx.store.commit(claim.orderId, [replace(again, existing.etag)]);
      if (renewed.kind === 'committed') return { kind: 'apply', message: underTheClaim(message, existing.document) };
      // Changed meanwhile (taken over, or renewed by another copy): read it again.
      continue;
    }
    if (!(await isVoid(existing.document, ctx))) return { kind: 'decided', outcome: conflictWithClaim(message, existing.document, ctx) };
    // The claimer was rejected and holds no effect: its claim names nothing; this message takes it over.
    const takeover = await ctx.store.commit(claim.orderId, [replace(claim, existing.etag)]);
    if (takeover.kind === 'committed') return { kind: 'apply', message };
  }
  return { kind: 'decided', outcome: { kind: 'retry', reason: `payment claim ${claim.id} changed under ${ctx.maxConcurrencyAttempts} attempts in a row` } };
}

/** What the claim would let this message go on with, without asking whether the claim still holds. */
function sameRequestOrCopy(message: PaymentMessage, claim: PaymentClaimDocument): boolean {
  return claim.dedupKey === message.key.value
    ? isSameRequest(message, claim.fingerprint)
    : isSamePayment(message.payload, { orderId: claim.paymentOrderId, amount: claim.amount, currency: claim.currency });
}

/**
 * A claim is void when the message that wrote it can never apply it: it holds no effect (no inbox
 * marker under its key) and its order is stored and refuses the payment the claim names for good,
 * in another currency (an order's currency never changes) or past the exact-sum bound (`amountPaid`
 * only grows). Every attempt of the claimer, its copies, redeliveries and resubmits included, checks
 * both on a fresh read of the order before its etag-guarded batch, and a parked item of it is
 * rejected for the same reasons when its order's batch or a drain meets it, so none can apply it
 * later. Nothing else voids a claim: an item rejected `OrderNeverArrived` comes back parked afresh
 * from a late copy or a resubmit, already past the claim; a rejection record is found by MessageId,
 * which the sender chooses (another message rejected under it says nothing of this one); and
 * without a refusal the claimer may still be on its way to its effect (a crash between the claim
 * and the batch): the claim holds, never two effects.
 */
async function isVoid(claim: PaymentClaimDocument, ctx: FlowContext): Promise<boolean> {
  const orderId = claim.paymentOrderId;
  const order = await ctx.store.read<OrderDocument>(orderId, orderDocumentId(orderId));
  if (order === undefined || (paymentCurrencyMismatch(order.document, claim) ?? paymentOutOfRange(order.document, claim)) === undefined) return false;
  // The order first, then the marker: a claimer that applied after the order was read finds it too
  // full for itself, never for a second copy, and its marker (written in one batch with the order) is
  // there to be read. Read the other way round, an order the claimer just filled looks full for it.
  return (await ctx.store.read(orderId, inboxMarkerId(claim.dedupKey))) === undefined;
}

/** A claim this message may go on under (sameRequestOrCopy): the claimer itself again, or a copy seen as the claimer. */
function underTheClaim(message: PaymentMessage, claim: PaymentClaimDocument): PaymentMessage {
  return claim.dedupKey === message.key.value ? message : asCopyOf(message, claim);
}

function conflictWithClaim(message: PaymentMessage, claim: PaymentClaimDocument, ctx: FlowContext): ProcessingOutcome {
  const detail = `payment ${claim.paymentId} was claimed for order ${claim.paymentOrderId} (${claim.amount} ${claim.currency}, key ${claim.dedupKey}); this one names order ${message.payload.orderId} (${message.payload.amount} ${message.payload.currency})`;
  return recordConflict(message, { id: claim.id, fingerprint: claim.fingerprint, messageId: claim.messageId }, ctx, detail);
}

/** The copy, seen as the message that claimed the payment: same key and fingerprint, its own MessageId. */
function asCopyOf(message: PaymentMessage, claim: PaymentClaimDocument): PaymentMessage {
  const { validatedFingerprint: _ignored, ...rest } = message;
  return { ...rest, key: { value: claim.dedupKey, source: message.key.source }, fingerprint: claim.fingerprint };
}

function newPaymentClaim(message: PaymentMessage, ctx: FlowContext): PaymentClaimDocument {
  const payment = message.payload;
  const { partitionKey, id } = paymentClaimLocation(payment.paymentId, ctx.consumerName);
  return {
    id,
    orderId: partitionKey,
    docType: 'payment-claim',
    paymentId: payment.paymentId,
    paymentOrderId: payment.orderId,
    amount: payment.amount,
    currency: payment.currency,
    dedupKey: message.key.value,
    fingerprint: message.fingerprint,
    messageId: message.messageId,
    claimedAt: ctx.now().toISOString(),
    ttl: claimTtlSeconds(ctx.markerTtlSeconds),
  };
}
