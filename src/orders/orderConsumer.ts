import { RejectedDeliveries, decideWithRetryLayers, deliveryHistoryOf, recordRejection } from '../consumer/index.js';
import type { DeliveryHistory } from '../consumer/index.js';
import { PermanentMessageError } from '../idempotency/index.js';
import type { ProcessingOutcome, RetryPolicy, StoredDocument } from '../idempotency/index.js';
import { withoutFieldsTheBodyMayHaveWritten } from '../servicebus/index.js';
import type { MessageEnvelope, RetryScheduler } from '../servicebus/index.js';
import type { LogSink, OutcomeTelemetry } from '../telemetry/index.js';
import { applyNewerStatus } from './changeOrderStatus.js';
import type { FlowContext } from './flowContext.js';
import { parseOrderMessage } from './parseOrderMessage.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { createOrderOrDetectDuplicate } from './placeOrder.js';
import { applyPaymentOnce } from './receivePayment.js';

export interface OrderConsumerOptions extends FlowContext {
  readonly consumerName?: string;
  readonly maxMessageBytes: number;
  readonly telemetry: OutcomeTelemetry;
  /** The two retry layers; without it, a failure is handed straight back to Service Bus. */
  readonly retry?: RetryPolicy;
  /** Sends delayed-retry copies; without it, a failure past the in-invocation retries is handed back. */
  readonly scheduler?: RetryScheduler;
  /** RETRY_STATE_SIGNING_KEY: signs delayed-retry state and keys copy MessageIds. */
  readonly retryStateKey?: string;
  /** RETRY_STATE_SIGNING_KEY_PREVIOUS: also accepted when verifying, during a rotation. */
  readonly retryStatePreviousKey?: string;
  /** How many rejected broker messages to remember (rejectedDeliveries.ts); a test's small number shows the bound. */
  readonly rejectedDeliveriesCapacity?: number;
}

/** One delivery's outcome and what is known of the message, for the log line and the caller. */
export interface ConsumeResult {
  readonly outcome: ProcessingOutcome;
  readonly dedupKey?: string;
  readonly type?: string;
  readonly orderId?: string;
}

/** The consumer flow for the orders queue: decide, record, report. It never settles the message itself. */
export class OrderConsumer {
  /** Unreadable messages this instance rejected: their redeliveries are answered without a parse or a store call. */
  private readonly rejectedDeliveries: RejectedDeliveries<ConsumeResult>;

  constructor(private readonly options: OrderConsumerOptions) {
    this.rejectedDeliveries = new RejectedDeliveries(options.rejectedDeliveriesCapacity, textHeldBy);
  }

  async consume(delivered: MessageEnvelope, body: unknown, log: LogSink): Promise<ConsumeResult> {
    const startedAt = performance.now();
    // The delivery count and sequence number decide what is read first and what is recalled: only the broker's count.
    const envelope = withoutFieldsTheBodyMayHaveWritten(delivered, body);
    const result = this.rejectedDeliveries.recall(envelope)?.result ?? (await this.decideWithRetries(envelope, body));
    this.options.telemetry.report({ ...result, envelope, durationMs: performance.now() - startedAt }, log);
    return result;
  }

  private decideWithRetries(envelope: MessageEnvelope, body: unknown): Promise<ConsumeResult> {
    return decideWithRetryLayers(envelope, body, () => this.decide(envelope, body), this.options, (known, error) => this.rejectOrRetry(envelope, error, known));
  }

  private async decide(envelope: MessageEnvelope, body: unknown): Promise<ConsumeResult> {
    let parsed: ParsedOrderMessage | undefined;
    try {
      parsed = parseOrderMessage(envelope, body, this.options);
      const outcome = await this.dispatch(parsed, this.historyOf(envelope, body));
      const result = { outcome, dedupKey: parsed.key.value, type: parsed.type, orderId: parsed.payload.orderId };
      if (outcome.kind === 'conflict' || outcome.kind === 'invalid') await this.reject(envelope, outcome.error, result, outcome.kind === 'conflict' ? outcome.evidence : undefined);
      return result;
    } catch (error) {
      const known = { dedupKey: parsed?.key.value, type: parsed?.type, orderId: parsed?.payload.orderId };
      if (error instanceof PermanentMessageError) return this.rejectOrRetry(envelope, error, known, parsed === undefined);
      return { outcome: { kind: 'retry', reason: errorText(error), cause: error }, ...known };
    }
  }

  private historyOf(envelope: MessageEnvelope, body: unknown): DeliveryHistory {
    const { retryStateKey, retryStatePreviousKey } = this.options;
    const keys = retryStateKey === undefined ? undefined : { current: retryStateKey, previous: retryStatePreviousKey };
    return deliveryHistoryOf(envelope, body, { keys, nowMs: this.options.now().getTime() });
  }

  private dispatch(message: ParsedOrderMessage, delivery: DeliveryHistory): Promise<ProcessingOutcome> {
    switch (message.type) {
      case 'OrderPlaced':
        return createOrderOrDetectDuplicate(message, this.options, delivery);
      case 'PaymentReceived':
        return applyPaymentOnce(message, this.options, delivery);
      case 'OrderStatusChanged':
        return applyNewerStatus(message, this.options);
    }
  }

  /** `unreadable`: the message failed its parse, a verdict on the broker message alone, which its redeliveries may be given. */
  private async rejectOrRetry(envelope: MessageEnvelope, error: PermanentMessageError, known: Omit<ConsumeResult, 'outcome'>, unreadable = false): Promise<ConsumeResult> {
    const result: ConsumeResult = { outcome: { kind: 'invalid', error }, ...known, dedupKey: known.dedupKey ?? error.dedupKey };
    try {
      await this.reject(envelope, error, result);
      if (unreadable) this.rejectedDeliveries.remember(envelope, rememberedForm(result, error));
      return result;
    } catch (recordingError) {
      return { ...known, outcome: { kind: 'retry', reason: `could not record rejection: ${errorText(recordingError)}`, cause: recordingError } };
    }
  }

  private reject(envelope: MessageEnvelope, error: PermanentMessageError, known: Omit<ConsumeResult, 'outcome'>, evidence?: StoredDocument): Promise<void> {
    return recordRejection(envelope, { error, dedupKey: known.dedupKey, messageType: known.type, orderId: known.orderId, evidence }, this.options);
  }
}

/** The longest reason a remembered rejection keeps: the rejection record holds the whole of it. */
const maxRememberedDescription = 500;

/**
 * What the memory keeps of a rejection: its code, its reason cut to a bound (a sender chooses how
 * long a type name or a key is, and a flood's entries would otherwise be kept whole, 10,000 times),
 * no cause and no second copy of the key in the error's message.
 */
function rememberedForm(result: ConsumeResult, error: PermanentMessageError): ConsumeResult {
  const { description } = error;
  const kept = description.length > maxRememberedDescription ? `${description.slice(0, maxRememberedDescription)}… (cut; the rejection record holds the whole reason)` : description;
  return { ...result, outcome: { kind: 'invalid', error: new PermanentMessageError(error.code, kept) } };
}

/** The characters a remembered result holds. */
function textHeldBy(result: ConsumeResult): number {
  const error = result.outcome.kind === 'invalid' ? result.outcome.error : undefined;
  return (error ? error.description.length + error.message.length : 0) + (result.dedupKey?.length ?? 0) + (result.type?.length ?? 0) + (result.orderId?.length ?? 0);
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
