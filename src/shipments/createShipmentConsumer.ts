import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import { metrics } from '@opentelemetry/api';
import type { Meter } from '@opentelemetry/api';
import type { Settings } from '../config.js';
import { ConfigurationError } from '../configurationError.js';
import type { DocumentStore } from '../idempotency/index.js';
import { ordersStore } from '../orders/ordersStore.js';
import { ServiceBusRetryScheduler } from '../servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry, ParkedItemMetrics, ShipmentMetrics, childTraceparent, meterName, reportReconcileRun } from '../telemetry/index.js';
import type { LogSink } from '../telemetry/index.js';
import type { ShipmentContext } from './bookShipment.js';
import type { CarrierClient } from './carrierClient.js';
import { HttpCarrierClient } from './httpCarrierClient.js';
import { reconcileShipments } from './reconcileShipments.js';
import type { ReconcileResult } from './reconcileShipments.js';
import { ShipmentConsumer } from './shipmentConsumer.js';

export interface ShipmentOverrides {
  readonly meter?: Meter;
  readonly now?: () => Date;
  readonly store?: DocumentStore;
  readonly carrier?: CarrierClient;
  /** The pause between in-invocation retries. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The consumer of the fulfilment subscription, from validated settings: one carrier client per process. */
export function createShipmentConsumer(settings: Settings, overrides: ShipmentOverrides = {}): ShipmentConsumer {
  const meter = overrides.meter ?? metrics.getMeter(meterName);
  const { shipments } = settings;
  return new ShipmentConsumer({
    ...shipmentContext(settings, overrides),
    consumerName: shipments.fulfilmentSubscriptionName,
    maxMessageBytes: settings.maxMessageBytes,
    markerTtlSeconds: settings.markerTtlSeconds,
    retry: settings.retry,
    retryStateKey: settings.retry.stateSigningKey,
    retryStatePreviousKey: settings.retry.previousStateSigningKey,
    sleep: overrides.sleep ?? ((ms: number) => setTimeout(ms).then(() => undefined)),
    // Copies go to the topic addressed to this subscription (`to`), which the rules route to it alone.
    scheduler: settings.retry.delayedRetryEnabled ? new ServiceBusRetryScheduler(settings.serviceBus, settings.outbox.orderEventsTopicName, shipments.fulfilmentSubscriptionName) : undefined,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(meter), new ParkedItemMetrics(meter), 'shipment-message'),
  });
}

export interface ShipmentReconciler {
  reconcile(log: LogSink, traceparent?: string): Promise<ReconcileResult>;
}

export function createShipmentReconciler(settings: Settings, overrides: ShipmentOverrides = {}): ShipmentReconciler {
  const ctx = shipmentContext(settings, overrides);
  const shipmentMetrics = new ShipmentMetrics(overrides.meter ?? metrics.getMeter(meterName));
  const options = { maxAttempts: settings.shipments.reconcileMaxAttempts, batchSize: settings.shipments.reconcileBatchSize, transientBudgetMs: settings.retry.budgetMs };
  return {
    async reconcile(log, traceparent) {
      const caller = { owner: `reconciler/${randomUUID()}`, traceparent: childTraceparent(traceparent) };
      const result = await reconcileShipments(ctx, options, caller);
      reportReconcileRun(log, shipmentMetrics, result);
      return result;
    },
  };
}

function shipmentContext(settings: Settings, overrides: ShipmentOverrides): ShipmentContext {
  const { shipments } = settings;
  const now = overrides.now ?? (() => new Date());
  return {
    store: overrides.store ?? ordersStore(settings),
    carrier: overrides.carrier ?? carrierOf(settings, now),
    now,
    leaseMs: shipments.leaseSeconds * 1000,
    maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
  };
}

function carrierOf(settings: Settings, now: () => Date): CarrierClient {
  const { carrierApiUrl, carrierApiKey, carrierTimeoutMs } = settings.shipments;
  if (!carrierApiUrl) throw new ConfigurationError([{ setting: 'CARRIER_API_URL', problem: 'is required by requestShipment and reconcileShipments (the carrier API they book with)' }]);
  return new HttpCarrierClient({ baseUrl: carrierApiUrl, apiKey: carrierApiKey, timeoutMs: carrierTimeoutMs, now });
}
