import { randomUUID } from 'node:crypto';
import { PermanentMessageError } from '../idempotency/index.js';
import type { ProcessingOutcome, RetryPolicy } from '../idempotency/index.js';
import { decideWithRetryLayers, recordRejection } from '../consumer/index.js';
import type { RejectionContext } from '../consumer/index.js';
import type { MessageEnvelope, RetryScheduler } from '../servicebus/index.js';
import { childTraceparent } from '../telemetry/index.js';
import type { LogSink, OutcomeTelemetry } from '../telemetry/index.js';
import { bookShipmentOnce, releaseLease } from './bookShipment.js';
import type { ShipmentContext } from './bookShipment.js';
import { parseShipmentEvent } from './orderAcceptedEvent.js';
import type { ShipmentEvent } from './orderAcceptedEvent.js';

export interface ShipmentConsumerOptions extends ShipmentContext {
  /** Names this consumer's rejection records (`rejection|fulfilment|<MessageId>`) and its lease owners. */
  readonly consumerName: string;
  readonly maxMessageBytes: number;
  readonly markerTtlSeconds: number;
  readonly telemetry: OutcomeTelemetry;
  readonly retry?: RetryPolicy;
  readonly scheduler?: RetryScheduler;
  /** RETRY_STATE_SIGNING_KEY: signs delayed-retry state and keys copy MessageIds. */
  readonly retryStateKey?: string;
  /** RETRY_STATE_SIGNING_KEY_PREVIOUS: also accepted when verifying, during a rotation. */
  readonly retryStatePreviousKey?: string;
  /** The pause between in-invocation retries: injected, so nothing here waits on the machine's clock. */
  readonly sleep: (ms: number) => Promise<void>;
}

/** What the Functions host knows of the invocation that the flow uses. */
export interface InvocationInfo {
  readonly invocationId?: string;
  /** The invocation's W3C trace context (`context.traceContext.traceParent`). */
  readonly traceparent?: string;
}

export interface ShipmentConsumeResult {
  readonly outcome: ProcessingOutcome;
  readonly dedupKey?: string;
  readonly orderId?: string;
  readonly type?: string;
  readonly shipmentId?: string;
}

/** The fulfilment subscription's flow: one OrderAccepted event, one booking with the carrier. */
export class ShipmentConsumer {
  constructor(private readonly options: ShipmentConsumerOptions) {}

  async consume(envelope: MessageEnvelope, body: unknown, log: LogSink, invocation: InvocationInfo = {}): Promise<ShipmentConsumeResult> {
    const startedAt = performance.now();
    // One owner for the whole invocation, its in-invocation retries included: its own earlier call is
    // reconciled and repeated, where another owner's live lease is waited for.
    const owner = `${this.options.consumerName}/${invocation.invocationId ?? randomUUID()}`;
    const caller = { owner, traceparent: childTraceparent(invocation.traceparent) };
    const result = await decideWithRetryLayers(envelope, body, () => this.decide(envelope, body, caller), this.options, (known, error) => this.reject(envelope, error, known));
    const handedBack = result.outcome.kind === 'retry' || result.outcome.kind === 'rescheduled';
    // Stryker disable next-line ConditionalExpression: a retry without an order id or key failed before the event was parsed, so there is no record whose lease could be ours
    if (handedBack && result.orderId !== undefined && result.dedupKey !== undefined) {
      await releaseLease(this.options, result.orderId, result.dedupKey, owner).catch(leaseRunsOut);
    }
    this.options.telemetry.report({ ...result, envelope, durationMs: performance.now() - startedAt }, log);
    return result;
  }

  private async decide(envelope: MessageEnvelope, body: unknown, caller: { owner: string; traceparent: string }): Promise<ShipmentConsumeResult> {
    let event: ShipmentEvent | undefined;
    try {
      event = parseShipmentEvent(envelope, body, this.options.maxMessageBytes);
      const booking = await bookShipmentOnce(event, this.options, caller);
      const result = { outcome: booking.outcome, dedupKey: event.key, orderId: event.orderId, type: 'OrderAccepted', shipmentId: booking.shipmentId };
      if (booking.outcome.kind === 'conflict' || booking.outcome.kind === 'invalid') return this.reject(envelope, booking.outcome.error, result);
      return result;
    } catch (error) {
      const known = { dedupKey: event?.key, orderId: event?.orderId, type: 'OrderAccepted' };
      if (error instanceof PermanentMessageError) return this.reject(envelope, error, { ...known, dedupKey: known.dedupKey ?? error.dedupKey });
      return { ...known, outcome: { kind: 'retry', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error), cause: error } };
    }
  }

  /** Bound for the dead-letter queue: the reason is recorded first, so the operator tool can tell it. */
  private async reject(envelope: MessageEnvelope, error: PermanentMessageError, known: Omit<ShipmentConsumeResult, 'outcome'>): Promise<ShipmentConsumeResult> {
    const kind = error.code === 'PayloadConflict' ? 'conflict' : 'invalid';
    try {
      await recordRejection(envelope, { error, dedupKey: known.dedupKey, messageType: known.type, orderId: undefined }, this.flowContext());
      return { ...known, outcome: { kind, error } };
    } catch (recordingError) {
      return { ...known, outcome: { kind: 'retry', reason: `could not record rejection: ${String(recordingError)}`, cause: recordingError } };
    }
  }

  private flowContext(): RejectionContext {
    const { store, now, markerTtlSeconds, consumerName } = this.options;
    return { store, now, markerTtlSeconds, consumerName };
  }
}

/** Releasing is best effort: a lease not released simply runs out. */
function leaseRunsOut(): void {}
