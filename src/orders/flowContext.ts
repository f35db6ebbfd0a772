import type { ConsumerRuntime } from '../consumer/index.js';

/** What the orders flows need: the consumers' one runtime, and the two settings that are the orders domain's own. */
export interface FlowContext extends ConsumerRuntime {
  /** Where the OrderAccepted events that orders write to their outbox are published. */
  readonly orderEventsDestination: string;
  /** How far one status change may move an order's version (default `defaultStatusVersionMaxStep`). */
  readonly statusVersionMaxStep?: number;
}
