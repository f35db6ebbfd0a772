import type { ProcessingOutcome } from '../idempotency/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import type { DeliveryHistory } from './deliveryHistory.js';
import type { ReceivedMessage } from './receivedMessage.js';

/** What is known of a message, for its log line, its outcome counter and its rejection record. */
export interface MessageFacts {
  readonly dedupKey?: string;
  readonly type?: string;
  readonly orderId?: string;
  readonly shipmentId?: string;
}

/** One delivery's outcome and what is known of the message: what `consume` returns and reports. */
export interface ConsumeResult extends MessageFacts {
  readonly outcome: ProcessingOutcome;
}

/** What the Functions host knows of the invocation. */
export interface InvocationInfo {
  readonly invocationId?: string;
  /** The invocation's W3C trace context (`context.traceContext.traceParent`). */
  readonly traceparent?: string;
}

/** What a handler is told of the delivery it handles. */
export interface Delivery<I> {
  readonly envelope: MessageEnvelope;
  /** Whether an earlier attempt may already have written the effect (only what a sender cannot set counts). */
  readonly history: DeliveryHistory;
  /** What the definition made of the invocation once (`startInvocation`): the same for each in-invocation retry. */
  readonly invocation: I;
}

/** A handler's answer: the outcome, and what the handling learnt for the log (a shipment id). */
export interface Handled {
  readonly outcome: ProcessingOutcome;
  readonly facts?: MessageFacts;
}

/**
 * A Service Bus consumer, as the pipeline runs it (consumerPipeline.ts): how a message is read and
 * what is done with it. Keys, the delivery history, the retry layers, rejection records, the memory
 * of unreadable messages and telemetry are the pipeline's.
 */
export interface ConsumerDefinition<P, I = undefined> {
  /**
   * Reads the message from its content (contentOf) once per delivery: its key, type and validated
   * payload. Throws `PermanentMessageError` for anything no redelivery can fix.
   */
  parse(message: ReceivedMessage): P;
  /** What is known of the message: `undefined` when it could not be parsed. */
  factsOf(parsed: P | undefined): MessageFacts;
  /**
   * Decides and writes the message's effect. Returns an outcome; a conflict or invalid outcome is
   * recorded by the pipeline. A thrown `PermanentMessageError` is a rejection; anything else thrown, a retry.
   */
  handle(parsed: P, delivery: Delivery<I>): Promise<Handled>;
  /** Made once per invocation, before the first attempt, and shared by its retries (shipments: the lease owner). */
  startInvocation(invocation: InvocationInfo): I;
  /** Called when the message is handed back (a retry, or a delayed copy scheduled): shipments ends its lease. */
  afterHandBack?(result: ConsumeResult, invocation: I): Promise<void>;
  /**
   * `name-the-order`: a rejection record names the message's order, and a conflict's record sits in
   * the order's partition, in one batch with its evidence; `message-only`: by MessageId alone.
   */
  readonly rejectionRecords: 'name-the-order' | 'message-only';
}
