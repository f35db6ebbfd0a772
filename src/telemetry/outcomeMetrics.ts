import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import type { OutcomeKind } from '../idempotency/index.js';

export const meterName = 'idempotent-order-consumer';

/**
 * `orders.messages` counts deliveries by outcome and type (a rising `duplicate` is redelivery
 * absorbed; any `conflict` needs an operator); `orders.message.duration` is their latency.
 * Instruments come from the OpenTelemetry API: no-ops until the host registers a MeterProvider.
 */
export class OutcomeMetrics {
  private readonly messages: Counter;
  private readonly duration: Histogram;

  constructor(meter: Meter) {
    this.messages = meter.createCounter('orders.messages', { description: 'Order messages processed, by outcome and type' });
    this.duration = meter.createHistogram('orders.message.duration', { description: 'Time to process one order message', unit: 'ms' });
  }

  record(outcome: OutcomeKind, type: string | undefined, durationMs: number): void {
    const attributes = { outcome, type: type ?? 'unknown' };
    this.messages.add(1, attributes);
    this.duration.record(durationMs, attributes);
  }
}
