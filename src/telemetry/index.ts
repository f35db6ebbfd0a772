export { writeMessageLog } from './messageLog.js';
export type { LogSink, MessageLogRecord } from './messageLog.js';
export { OutcomeMetrics, meterName } from './outcomeMetrics.js';
export { OutcomeTelemetry } from './outcomeTelemetry.js';
export type { OutcomeReport } from './outcomeTelemetry.js';
export { ParkedItemMetrics, reportParkedItems } from './parkedItemTelemetry.js';
export type { ParkedItemEvent } from './parkedItemTelemetry.js';
export { OutboxMetrics, reportOutboxFailure, reportOutboxLag } from './outboxTelemetry.js';
export type { OutboxEventOutcome, OutboxFailureLine } from './outboxTelemetry.js';
