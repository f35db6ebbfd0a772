import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import type { LogSink } from './messageLog.js';

export type OutboxEventOutcome = 'published' | 'failed' | 'already-handled';

/**
 * `outbox.events` counts entries by what the publisher did with them; `outbox.publish_delay` is
 * the time from commit to publish; `outbox.lag` is the age of the oldest pending entry, measured by
 * each sweep (0 when nothing is pending): the figure to alert on.
 */
export class OutboxMetrics {
  private readonly events: Counter;
  private readonly delay: Histogram;
  private readonly lag: Histogram;

  constructor(meter: Meter) {
    this.events = meter.createCounter('outbox.events', {
      description: 'Outbox entries published, set aside as failed, or already handled by another publisher',
    });
    this.delay = meter.createHistogram('outbox.publish_delay', { unit: 's', description: 'From the commit that wrote an outbox entry to its publication' });
    this.lag = meter.createHistogram('outbox.lag', { unit: 's', description: 'Age of the oldest pending outbox entry, at each sweep' });
  }

  recordEvents(outcome: OutboxEventOutcome, count: number, destination?: string): void {
    if (count > 0) this.events.add(count, destination === undefined ? { outcome } : { outcome, destination });
  }

  recordPublishDelay(seconds: number): void {
    this.delay.record(seconds);
  }

  recordLag(seconds: number): void {
    this.lag.record(seconds);
  }
}

export interface OutboxFailureLine {
  readonly id: string;
  readonly orderId: string;
  readonly destination: string;
  readonly messageId: string;
  readonly reason: string;
  readonly detail: string;
}

/** One error line per entry set aside: it needs a person, as a dead-lettered message does. */
export function reportOutboxFailure(sink: LogSink, source: string, failure: OutboxFailureLine): void {
  sink.error(JSON.stringify({ event: 'outbox', outcome: 'failed', source, ...failure }));
}

/** Above the threshold the lag is an error line, so an alert on error lines catches a stuck outbox. */
export function reportOutboxLag(
  sink: LogSink,
  metrics: OutboxMetrics,
  lag: { pending: number; oldestPendingAgeSeconds?: number; oldestPendingId?: string },
  thresholdSeconds: number,
): void {
  const seconds = lag.oldestPendingAgeSeconds ?? 0;
  metrics.recordLag(seconds);
  const line = JSON.stringify({
    event: 'outbox-lag',
    pending: lag.pending,
    oldestPendingAgeSeconds: seconds,
    oldestPendingId: lag.oldestPendingId,
    thresholdSeconds,
  });
  if (seconds > thresholdSeconds) sink.error(line);
  else sink.info(line);
}
