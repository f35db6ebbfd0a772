import { ConsumerPipeline } from '../consumer/index.js';
import type { PipelineOptions } from '../consumer/index.js';
import type { FlowContext } from './flowContext.js';
import { orderMessages } from './orderMessages.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';

export interface OrderConsumerOptions extends FlowContext, PipelineOptions {}

/** The consumer of the orders queue: the orders definition (orderMessages.ts) on the one pipeline. It never settles the message itself. */
export class OrderConsumer extends ConsumerPipeline<ParsedOrderMessage> {
  constructor(options: OrderConsumerOptions) {
    super(orderMessages(options), options);
  }
}
