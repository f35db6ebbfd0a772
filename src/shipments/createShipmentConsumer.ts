import { randomUUID } from 'node:crypto';
import type { Settings } from '../config.js';
import { realSleep, resolveRuntime } from '../consumer/index.js';
import type { ConsumerRuntime, RuntimeOverrides } from '../consumer/index.js';
import { ConfigurationError } from '../configurationError.js';
import { ServiceBusRetryScheduler } from '../servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry, ParkedItemMetrics, ShipmentMetrics, childTraceparent, reportReconcileRun } from '../telemetry/index.js';
import type { LogSink } from '../telemetry/index.js';
import type { ShipmentContext } from './bookShipment.js';
import type { CarrierClient } from './carrierClient.js';
import { HttpCarrierClient } from './httpCarrierClient.js';
import { reconcileShipments } from './reconcileShipments.js';
import type { ReconcileResult } from './reconcileShipments.js';
import { ShipmentConsumer } from './shipmentConsumer.js';

export interface ShipmentOverrides extends RuntimeOverrides {
  readonly carrier?: CarrierClient;
}

/** The consumer of the fulfilment subscription, from validated settings: one carrier client per process. */
export function createShipmentConsumer(settings: Settings, overrides: ShipmentOverrides = {}): ShipmentConsumer {
  const { meter, ...runtime } = resolveRuntime(settings, overrides);
  const { shipments } = settings;
  return new ShipmentConsumer({
    ...runtime,
    ...shipmentContext(settings, runtime, overrides),
    consumerName: shipments.fulfilmentSubscriptionName,
    maxMessageBytes: settings.maxMessageBytes,
    retry: settings.retry,
    retryStateKey: settings.retry.stateSigningKey,
    retryStatePreviousKey: settings.retry.previousStateSigningKey,
    sleep: runtime.sleep ?? realSleep,
    // Copies go to the topic addressed to this subscription (`to`), which the rules route to it alone.
    scheduler: settings.retry.delayedRetryEnabled
      ? new ServiceBusRetryScheduler(settings.serviceBus, settings.outbox.orderEventsTopicName, shipments.fulfilmentSubscriptionName)
      : undefined,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(meter), new ParkedItemMetrics(meter), 'shipment-message'),
  });
}

export interface ShipmentReconciler {
  reconcile(log: LogSink, traceparent?: string): Promise<ReconcileResult>;
}

export function createShipmentReconciler(settings: Settings, overrides: ShipmentOverrides = {}): ShipmentReconciler {
  const runtime = resolveRuntime(settings, overrides);
  const ctx = shipmentContext(settings, runtime, overrides);
  const shipmentMetrics = new ShipmentMetrics(runtime.meter);
  const options = {
    maxAttempts: settings.shipments.reconcileMaxAttempts,
    batchSize: settings.shipments.reconcileBatchSize,
    transientBudgetMs: settings.retry.budgetMs,
  };
  return {
    async reconcile(log, traceparent) {
      const caller = { owner: `reconciler/${randomUUID()}`, traceparent: childTraceparent(traceparent) };
      const result = await reconcileShipments(ctx, options, caller);
      reportReconcileRun(log, shipmentMetrics, result);
      return result;
    },
  };
}

function shipmentContext(settings: Settings, runtime: ConsumerRuntime, overrides: ShipmentOverrides): ShipmentContext {
  const { store, now, maxConcurrencyAttempts } = runtime;
  return { store, now, maxConcurrencyAttempts, carrier: overrides.carrier ?? carrierOf(settings, now), leaseMs: settings.shipments.leaseSeconds * 1000 };
}

function carrierOf(settings: Settings, now: () => Date): CarrierClient {
  const { carrierApiUrl, carrierApiKey, carrierTimeoutMs } = settings.shipments;
  if (!carrierApiUrl)
    throw new ConfigurationError([
      { setting: 'CARRIER_API_URL', problem: 'is required by requestShipment and reconcileShipments (the carrier API they book with)' },
    ]);
  return new HttpCarrierClient({ baseUrl: carrierApiUrl, apiKey: carrierApiKey, timeoutMs: carrierTimeoutMs, now });
}
