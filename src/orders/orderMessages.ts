import type { ConsumerDefinition, Delivery, MessageFacts } from '../consumer/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { applyNewerStatus } from './changeOrderStatus.js';
import type { FlowContext } from './flowContext.js';
import { parseReceivedOrderMessage } from './parseOrderMessage.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { createOrderOrDetectDuplicate } from './placeOrder.js';
import { applyPaymentOnce } from './receivePayment.js';

/**
 * The orders queue's consumer, as the pipeline runs it. A new message type is a schema
 * (schemas.ts: `schemaByType`), its case in `OrderMessage` (parseOrderMessage.ts) and its case here.
 */
export function orderMessages(ctx: FlowContext): ConsumerDefinition<ParsedOrderMessage> {
  return {
    parse: (message) => parseReceivedOrderMessage(message, ctx.consumerName),
    factsOf: orderFacts,
    handle: async (message, delivery) => ({ outcome: await handleOrderMessage(message, ctx, delivery) }),
    startInvocation: () => undefined,
    rejectionRecords: 'name-the-order',
  };
}

function orderFacts(message: ParsedOrderMessage | undefined): MessageFacts {
  return message === undefined ? {} : { dedupKey: message.key.value, type: message.type, orderId: message.payload.orderId };
}

function handleOrderMessage(message: ParsedOrderMessage, ctx: FlowContext, delivery: Delivery<undefined>): Promise<ProcessingOutcome> {
  switch (message.type) {
    case 'OrderPlaced':
      return createOrderOrDetectDuplicate(message, ctx, delivery.history);
    case 'PaymentReceived':
      return applyPaymentOnce(message, ctx, delivery.history);
    case 'OrderStatusChanged':
      return applyNewerStatus(message, ctx);
  }
}
