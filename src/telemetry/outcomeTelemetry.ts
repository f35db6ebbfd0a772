import type { ProcessingOutcome } from '../idempotency/index.js';
import { writeMessageLog } from './messageLog.js';
import type { LogSink } from './messageLog.js';
import type { OutcomeMetrics } from './outcomeMetrics.js';

export interface OutcomeReport {
  readonly outcome: ProcessingOutcome;
  readonly envelope: { readonly messageId?: string; readonly correlationId?: string; readonly deliveryCount?: number };
  readonly dedupKey?: string;
  readonly type?: string;
  readonly orderId?: string;
  readonly durationMs: number;
}

/** One log line and one count per delivery, whatever the outcome. */
export class OutcomeTelemetry {
  constructor(private readonly metrics: OutcomeMetrics) {}

  report(report: OutcomeReport, log: LogSink): void {
    const { outcome, envelope } = report;
    const durationMs = Math.round(report.durationMs * 100) / 100;
    writeMessageLog(log, {
      event: 'order-message',
      outcome: outcome.kind,
      dedupKey: report.dedupKey,
      messageId: envelope.messageId,
      correlationId: envelope.correlationId,
      deliveryCount: envelope.deliveryCount,
      orderId: report.orderId,
      type: report.type,
      durationMs,
      reason: reasonOf(outcome),
    });
    this.metrics.record(outcome.kind, report.type, durationMs);
  }
}

function reasonOf(outcome: ProcessingOutcome): string | undefined {
  switch (outcome.kind) {
    case 'conflict':
    case 'invalid':
      return outcome.error.message;
    case 'retry':
      return outcome.reason;
    case 'rescheduled':
      return `delayed retry ${outcome.attempt} as ${outcome.copyMessageId} at ${outcome.enqueueAt}: ${outcome.reason}`;
    case 'stale':
      return `stored status version ${outcome.storedVersion}`;
    default:
      return undefined;
  }
}
