import type { OutcomeKind } from '../idempotency/index.js';

/** The logging half of the Functions InvocationContext (or any console-like logger). */
export interface LogSink {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** The one line written per delivery: enough to find a message, its key and its fate in the logs. */
export interface MessageLogRecord {
  /** `order-message` for the orders queue, `shipment-message` for the fulfilment subscription. */
  readonly event: 'order-message' | 'shipment-message';
  readonly outcome: OutcomeKind;
  readonly dedupKey?: string;
  readonly messageId?: string;
  readonly correlationId?: string;
  readonly deliveryCount?: number;
  readonly orderId?: string;
  readonly type?: string;
  readonly durationMs: number;
  readonly reason?: string;
  readonly shipmentId?: string;
}

/** Conflicts and invalid messages need a person: error level. A retry is expected to heal: warning. */
export function writeMessageLog(sink: LogSink, record: MessageLogRecord): void {
  const line = JSON.stringify(record);
  if (record.outcome === 'conflict' || record.outcome === 'invalid') sink.error(line);
  else if (record.outcome === 'retry' || record.outcome === 'rescheduled') sink.warn(line);
  else sink.info(line);
}
