import { create } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { classifyExistingRecord } from './detectDuplicate.js';
import { newOrderAcceptedOutbox, newOrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import type { OrderPlaced } from './schemas.js';

/**
 * OrderPlaced: the order document is its own dedup marker. The order and its OrderAccepted outbox
 * entry are created in one transactional batch, so a crash can leave both or neither; a second
 * copy of the message gets 409 on the order and is told apart by fingerprint.
 */
export async function createOrderOrDetectDuplicate(
  message: ParsedOrderMessage & { readonly payload: OrderPlaced },
  ctx: FlowContext,
): Promise<ProcessingOutcome> {
  const order = newOrderDocument(message.payload, {
    messageId: message.messageId,
    dedupKey: message.key.value,
    fingerprint: message.fingerprint,
    processedAt: ctx.now().toISOString(),
  });
  const result = await ctx.store.commit(order.orderId, [create(order), create(newOrderAcceptedOutbox(order))]);
  if (result.kind === 'committed') return { kind: 'created' };
  if (result.kind === 'already-exists' && result.operationIndex === 0) {
    return classifyExistingRecord(message, order.id, ctx);
  }
  // An outbox entry without its order means someone deleted the order by hand: let an operator look.
  return { kind: 'retry', reason: `order ${order.orderId}: unexpected ${result.kind} on batch operation ${result.operationIndex}` };
}
