import { metrics as metricsApi } from '@opentelemetry/api';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { writeMessageLog } from './messageLog.js';
import type { LogSink, MessageLogRecord } from './messageLog.js';
import { meterName } from './outcomeMetrics.js';
import type { OutcomeMetrics } from './outcomeMetrics.js';
import { ParkedItemMetrics, reportParkedItems } from './parkedItemTelemetry.js';

export interface OutcomeReport {
  readonly outcome: ProcessingOutcome;
  readonly envelope: { readonly messageId?: string; readonly correlationId?: string; readonly deliveryCount?: number };
  readonly dedupKey?: string;
  readonly type?: string;
  readonly orderId?: string;
  readonly durationMs: number;
  readonly shipmentId?: string;
}

/** One log line and one count per delivery, whatever the outcome. */
export class OutcomeTelemetry {
  constructor(
    private readonly metrics: OutcomeMetrics,
    private readonly parkedItems: ParkedItemMetrics = new ParkedItemMetrics(metricsApi.getMeter(meterName)),
    private readonly event: MessageLogRecord['event'] = 'order-message',
  ) {}

  report(report: OutcomeReport, log: LogSink): void {
    const { outcome, envelope } = report;
    const durationMs = Math.round(report.durationMs * 100) / 100;
    writeMessageLog(log, {
      event: this.event,
      outcome: outcome.kind,
      dedupKey: report.dedupKey,
      messageId: envelope.messageId,
      correlationId: envelope.correlationId,
      deliveryCount: envelope.deliveryCount,
      orderId: report.orderId,
      type: report.type,
      durationMs,
      reason: reasonOf(outcome),
      shipmentId: report.shipmentId,
    });
    this.metrics.record(outcome.kind, report.type, durationMs);
    if (outcome.kind === 'created') {
      reportParkedItems(log, this.parkedItems, `order ${report.orderId ?? 'unknown'} stored`, outcome.appliedParked ?? 0, outcome.rejectedParked ?? []);
    }
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
    case 'parked':
      return `order not stored yet: parked as ${outcome.itemId}`;
    case 'created':
      return outcome.appliedParked || outcome.rejectedParked?.length
        ? `with ${outcome.appliedParked ?? 0} parked item(s) applied, ${outcome.rejectedParked?.length ?? 0} rejected`
        : undefined;
    default:
      return undefined;
  }
}
