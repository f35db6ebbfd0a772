import { metrics } from '@opentelemetry/api';
import type { Meter } from '@opentelemetry/api';
import type { Settings } from '../config.js';
import { ServiceBusRetryScheduler } from '../servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry, meterName } from '../telemetry/index.js';
import { OrderConsumer } from './orderConsumer.js';
import { ordersStore } from './ordersStore.js';

export interface ConsumerOverrides {
  readonly meter?: Meter;
  readonly now?: () => Date;
}

/** The composition root: one Cosmos client and one consumer per process, from validated settings. */
export function createOrderConsumer(settings: Settings, overrides: ConsumerOverrides = {}): OrderConsumer {
  return new OrderConsumer({
    store: ordersStore(settings),
    now: overrides.now ?? (() => new Date()),
    consumerName: settings.consumerName,
    markerTtlSeconds: settings.markerTtlSeconds,
    orderEventsDestination: settings.outbox.orderEventsTopicName,
    maxMessageBytes: settings.maxMessageBytes,
    maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
    statusVersionMaxStep: settings.statusVersionMaxStep,
    retry: settings.retry,
    retryStateKey: settings.retry.stateSigningKey,
    retryStatePreviousKey: settings.retry.previousStateSigningKey,
    scheduler: settings.retry.delayedRetryEnabled ? new ServiceBusRetryScheduler(settings.serviceBus, settings.ordersQueueName) : undefined,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(overrides.meter ?? metrics.getMeter(meterName))),
  });
}
