import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import type { ParkedItemRejected } from '../idempotency/index.js';
import type { LogSink } from './messageLog.js';

export type ParkedItemEvent = 'applied' | 'rejected';

/**
 * `orders.parked_items` counts early arrivals applied to their order and those rejected (a
 * rejected one waits in the dead-letter tool's `parked` list for an operator: alert on any).
 */
export class ParkedItemMetrics {
  private readonly items: Counter;
  private readonly oldestAge: Histogram;

  constructor(meter: Meter) {
    this.items = meter.createCounter('orders.parked_items', { description: 'Early arrivals applied to their order or rejected, by event and reason' });
    this.oldestAge = meter.createHistogram('orders.parked_items.oldest_age', {
      unit: 's',
      description: 'Age of the oldest early arrival still waiting for its order, at each sweep',
    });
  }

  /** One value per sweep (0 when nothing waits): an alert on its maximum sees an order that never comes before the horizon does. */
  recordOldestAge(seconds: number): void {
    this.oldestAge.record(seconds);
  }

  record(event: ParkedItemEvent, count: number, reason?: string): void {
    if (count > 0) this.items.add(count, reason === undefined ? { event } : { event, reason });
  }
}

/** One error line per rejected item: it needs a person, as a dead-lettered message does. */
export function reportParkedItems(sink: LogSink, metrics: ParkedItemMetrics, source: string, applied: number, rejected: readonly ParkedItemRejected[]): void {
  metrics.record('applied', applied);
  for (const item of rejected) {
    metrics.record('rejected', 1, item.reason);
    sink.error(JSON.stringify({ event: 'parked-item', outcome: 'rejected', source, ...item }));
  }
}
