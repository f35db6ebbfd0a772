import { PermanentMessageError, create, replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { classifyExistingRecord } from './detectDuplicate.js';
import { inboxMarkerId, orderDocumentId, withPayment } from './documents.js';
import type { InboxMarkerDocument, OrderDocument } from './documents.js';
import { pauseAfterLostRace } from './flowContext.js';
import type { FlowContext } from './flowContext.js';
import { orderArrived, parkUntilOrderArrives } from './parkEarlyArrival.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import type { PaymentReceived } from './schemas.js';

/**
 * PaymentReceived adds to `amountPaid`, so applying it twice would count the money twice. The inbox
 * marker and the order change go in one batch: either both exist or neither, so the marker's 409
 * proves the payment was counted. The replace is guarded by the etag read just before; a 412 means
 * another message changed the order in between, and we read again. A payment whose order is not
 * stored yet is parked (parkEarlyArrival.ts) and applied when the order comes.
 */
export async function applyPaymentOnce(
  message: ParsedOrderMessage & { readonly payload: PaymentReceived },
  ctx: FlowContext,
): Promise<ProcessingOutcome> {
  const payment = message.payload;
  const marker = newInboxMarker(message, ctx);
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const current = await ctx.store.read<OrderDocument>(payment.orderId, orderDocumentId(payment.orderId));
    if (!current) {
      // The OrderPlaced is still on its way: keep the payment until it comes, and complete this message.
      const parked = await parkUntilOrderArrives(message, ctx);
      if (parked === orderArrived) continue;
      return parked;
    }
    if (current.document.currency !== payment.currency) return currencyMismatch(message, current.document);
    const result = await ctx.store.commit(payment.orderId, [
      create(marker),
      replace(withPayment(current.document, payment), current.etag),
    ]);
    if (result.kind === 'committed') return { kind: 'created' };
    if (result.kind === 'already-exists' && result.operationIndex === 0) return classifyExistingRecord(message, marker.id, ctx);
    await pauseAfterLostRace(attempt, ctx);
  }
  return { kind: 'retry', reason: `order ${payment.orderId} changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}

function newInboxMarker(message: ParsedOrderMessage, ctx: FlowContext): InboxMarkerDocument {
  return {
    id: inboxMarkerId(message.key.value),
    orderId: message.payload.orderId,
    docType: 'inbox',
    messageType: message.type,
    messageId: message.messageId,
    dedupKey: message.key.value,
    fingerprint: message.fingerprint,
    processedAt: ctx.now().toISOString(),
    payload: message.payload as PaymentReceived,
    ttl: ctx.markerTtlSeconds,
  };
}

function currencyMismatch(message: ParsedOrderMessage, order: OrderDocument): ProcessingOutcome {
  const description = `PaymentReceived.currency ${(message.payload as PaymentReceived).currency} differs from order ${order.orderId}'s ${order.currency}`;
  return { kind: 'invalid', error: new PermanentMessageError('CurrencyMismatch', description, message.key.value) };
}
