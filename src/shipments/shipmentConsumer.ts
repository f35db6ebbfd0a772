import { ConsumerPipeline } from '../consumer/index.js';
import type { PipelineOptions } from '../consumer/index.js';
import type { Caller, ShipmentContext } from './bookShipment.js';
import type { ShipmentEvent } from './orderAcceptedEvent.js';
import { shipmentMessages } from './shipmentMessages.js';

export interface ShipmentConsumerOptions extends ShipmentContext, PipelineOptions {
  /** Names this consumer's rejection records (`rejection|fulfilment|<MessageId>`) and its lease owners. */
  readonly consumerName: string;
  /** The pause between in-invocation retries: injected, so nothing here waits on the machine's clock. */
  readonly sleep: (ms: number) => Promise<void>;
}

/** The consumer of the fulfilment subscription: the shipments definition (shipmentMessages.ts) on the one pipeline. */
export class ShipmentConsumer extends ConsumerPipeline<ShipmentEvent, Required<Caller>> {
  constructor(options: ShipmentConsumerOptions) {
    super(shipmentMessages(options), options);
  }
}
