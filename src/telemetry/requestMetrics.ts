import type { Counter, Histogram, Meter } from '@opentelemetry/api';

/**
 * `orders.requests` counts HTTP intake requests by outcome and status (`duplicate` is a client
 * retry answered from the stored response; a steady `conflict` is a client reusing keys);
 * `orders.request.duration` is their latency.
 */
export class RequestMetrics {
  private readonly requests: Counter;
  private readonly duration: Histogram;

  constructor(meter: Meter) {
    this.requests = meter.createCounter('orders.requests', { description: 'POST /api/orders requests, by outcome and status' });
    this.duration = meter.createHistogram('orders.request.duration', { description: 'Time to answer one POST /api/orders', unit: 'ms' });
  }

  record(outcome: string, status: number, durationMs: number): void {
    const attributes = { outcome, status: String(status) };
    this.requests.add(1, attributes);
    this.duration.record(durationMs, attributes);
  }
}
