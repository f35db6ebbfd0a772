import type { Counter, Meter } from '@opentelemetry/api';
import type { LogSink } from './messageLog.js';

export interface ReconciledItemLine {
  readonly id: string;
  readonly orderId: string;
  readonly result: string;
  readonly shipmentId?: string;
  readonly reason?: string;
}

/**
 * `shipments.reconciled` counts what each reconciler round made of an expired record (`result`:
 * completed, refused, still-in-progress, escalated, taken-by-another); `shipments.escalations`
 * counts records handed to an operator: the figure to alert on.
 */
export class ShipmentMetrics {
  private readonly reconciled: Counter;
  private readonly escalations: Counter;

  constructor(meter: Meter) {
    this.reconciled = meter.createCounter('shipments.reconciled', { description: 'Expired shipment records the reconciler examined, by what it made of them' });
    this.escalations = meter.createCounter('shipments.escalations', {
      description: 'Shipment records escalated to an operator after the reconcile rounds ran out',
    });
  }

  recordReconciled(result: string): void {
    this.reconciled.add(1, { result });
    if (result === 'escalated') this.escalations.add(1);
  }
}

/** One line per run, and an error line per escalated record: it needs a person, as a dead-lettered message does. */
export function reportReconcileRun(sink: LogSink, metrics: ShipmentMetrics, run: { examined: number; items: readonly ReconciledItemLine[] }): void {
  const byResult: Record<string, number> = {};
  for (const item of run.items) {
    byResult[item.result] = (byResult[item.result] ?? 0) + 1;
    metrics.recordReconciled(item.result);
    if (item.result === 'escalated') sink.error(JSON.stringify({ event: 'shipment', outcome: 'escalated', ...item }));
  }
  sink.info(JSON.stringify({ event: 'shipment-reconcile', examined: run.examined, ...byResult }));
}
