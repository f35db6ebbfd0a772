import { PermanentMessageError } from '../idempotency/index.js';
import type { StoredDocument } from '../idempotency/index.js';
import { withoutFieldsTheBodyMayHaveWritten } from '../servicebus/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import type { LogSink, OutcomeReport } from '../telemetry/index.js';
import type { ConsumeResult, ConsumerDefinition, InvocationInfo, MessageFacts } from './consumerDefinition.js';
import type { ConsumerRuntime } from './consumerRuntime.js';
import { afterAnEarlierRound, deliveryHistoryOf } from './deliveryHistory.js';
import type { DeliveryHistory } from './deliveryHistory.js';
import { readReceivedMessage } from './receivedMessage.js';
import type { ReceivedMessage } from './receivedMessage.js';
import { RejectedDeliveries } from './rejectedDeliveries.js';
import { recordRejection } from './rejections.js';
import { rememberedForm, textHeldBy } from './rememberedForm.js';
import { decideWithRetryLayers } from './retryLayers.js';
import type { RetryLayers } from './retryLayers.js';

/** What the pipeline runs with, besides the definition: the runtime, the limits, the retry layers and telemetry. */
export interface PipelineOptions extends ConsumerRuntime, RetryLayers {
  readonly maxMessageBytes: number;
  readonly telemetry: { report(report: OutcomeReport, log: LogSink): void };
  /** How many rejected broker messages to remember (rejectedDeliveries.ts); a test's small number shows the bound. */
  readonly rejectedDeliveriesCapacity?: number;
}

type Parsed<P> = { readonly ok: true; readonly parsed: P } | { readonly ok: false; readonly error: unknown };

/**
 * The lifecycle of every Service Bus consumer, as Powertools' IdempotencyHandler owns its caller's:
 * read the delivery once, recall an unreadable message already rejected, parse once, then handle
 * it inside the two retry layers; record every rejection before it is reported, and report one
 * line and one counter per delivery. It never settles the message (settlement.ts does, from the outcome).
 */
export class ConsumerPipeline<P, I = undefined> {
  /** Unreadable messages this instance rejected: their redeliveries are answered without a parse or a store call. */
  private readonly rejectedDeliveries: RejectedDeliveries<ConsumeResult>;

  constructor(
    private readonly definition: ConsumerDefinition<P, I>,
    private readonly options: PipelineOptions,
  ) {
    this.rejectedDeliveries = new RejectedDeliveries(options.rejectedDeliveriesCapacity, textHeldBy);
  }

  async consume(delivered: MessageEnvelope, body: unknown, log: LogSink, invocation: InvocationInfo = {}): Promise<ConsumeResult> {
    const startedAt = performance.now();
    // The delivery count and sequence number decide what is read first and what is recalled: only the broker's count.
    const envelope = withoutFieldsTheBodyMayHaveWritten(delivered, body);
    const result =
      this.rejectedDeliveries.recall(envelope)?.result ?? (await this.decide(readReceivedMessage(envelope, body, this.options.maxMessageBytes), invocation));
    this.options.telemetry.report({ ...result, envelope, durationMs: performance.now() - startedAt }, log);
    return result;
  }

  private async decide(message: ReceivedMessage, info: InvocationInfo): Promise<ConsumeResult> {
    const invocation = this.definition.startInvocation(info);
    const parsed = this.parse(message);
    const attempt = parsed.ok ? this.handler(message, parsed.parsed, invocation) : () => this.refuse(message, parsed.error);
    const result = await decideWithRetryLayers(message, attempt, this.options, (known, error) => this.rejectOrRetry(message.envelope, error, known));
    const handedBack = result.outcome.kind === 'retry' || result.outcome.kind === 'rescheduled';
    if (handedBack && this.definition.afterHandBack) await this.definition.afterHandBack(result, invocation);
    return result;
  }

  private parse(message: ReceivedMessage): Parsed<P> {
    try {
      return { ok: true, parsed: this.definition.parse(message) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private historyOf(message: ReceivedMessage): DeliveryHistory {
    const { retryStateKey, retryStatePreviousKey } = this.options;
    const keys = retryStateKey === undefined ? undefined : { current: retryStateKey, previous: retryStatePreviousKey };
    return deliveryHistoryOf(message, { keys, nowMs: this.options.now().getTime() });
  }

  /**
   * A message that could not be parsed: a verdict on the broker message alone, so once its record is
   * written, its redeliveries are answered from memory.
   */
  private async refuse(message: ReceivedMessage, error: unknown): Promise<ConsumeResult> {
    const known = this.definition.factsOf(undefined);
    if (!(error instanceof PermanentMessageError)) return retry(known, error);
    const result = await this.rejectOrRetry(message.envelope, error, known);
    if (result.outcome.kind === 'invalid') this.rejectedDeliveries.remember(message.envelope, rememberedForm(result, error));
    return result;
  }

  /**
   * One attempt at the parsed message, for each round of the retry layers; the delivery history is
   * read once, before the first. A later round follows an attempt of this invocation whose write may
   * have been applied with its answer lost (a 408 or a dropped connection after the commit): it reads
   * first, as a redelivery does, so that nothing is judged against its own effect.
   */
  private handler(message: ReceivedMessage, parsed: P, invocation: I): () => Promise<ConsumeResult> {
    const history = this.historyOf(message);
    let rounds = 0;
    return () => {
      rounds += 1;
      return this.handle(message, parsed, rounds === 1 ? history : afterAnEarlierRound, invocation);
    };
  }

  private async handle(message: ReceivedMessage, parsed: P, history: DeliveryHistory, invocation: I): Promise<ConsumeResult> {
    const known = this.definition.factsOf(parsed);
    try {
      const handled = await this.definition.handle(parsed, { envelope: message.envelope, history, invocation });
      const result: ConsumeResult = { ...known, ...handled.facts, outcome: handled.outcome };
      const { outcome } = handled;
      if (outcome.kind !== 'conflict' && outcome.kind !== 'invalid') return result;
      return await this.recorded(message.envelope, outcome.error, result, outcome.kind === 'conflict' ? outcome.evidence : undefined);
    } catch (error) {
      if (error instanceof PermanentMessageError) return this.rejectOrRetry(message.envelope, error, known);
      return retry(known, error);
    }
  }

  private rejectOrRetry(envelope: MessageEnvelope, error: PermanentMessageError, known: MessageFacts): Promise<ConsumeResult> {
    const result: ConsumeResult = { outcome: { kind: 'invalid', error }, ...known, dedupKey: known.dedupKey ?? error.dedupKey };
    return this.recorded(envelope, error, result);
  }

  /** A rejection is reported only once its record is written; a record that cannot be written hands the message back. */
  private async recorded(envelope: MessageEnvelope, error: PermanentMessageError, result: ConsumeResult, evidence?: StoredDocument): Promise<ConsumeResult> {
    const namesTheOrder = this.definition.rejectionRecords === 'name-the-order';
    const details = {
      error,
      dedupKey: result.dedupKey,
      messageType: result.type,
      orderId: namesTheOrder ? result.orderId : undefined,
      evidence: namesTheOrder ? evidence : undefined,
    };
    try {
      await recordRejection(envelope, details, this.options);
    } catch (recordingError) {
      const { outcome: _rejected, ...known } = result;
      return { ...known, outcome: { kind: 'retry', reason: `could not record rejection: ${errorText(recordingError)}`, cause: recordingError } };
    }
    return result;
  }
}

function retry(known: MessageFacts, error: unknown): ConsumeResult {
  return { ...known, outcome: { kind: 'retry', reason: errorText(error), cause: error } };
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
