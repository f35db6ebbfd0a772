import { metrics } from '@opentelemetry/api';
import type { Meter } from '@opentelemetry/api';
import type { Settings } from '../config.js';
import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import { ServiceBusRetryScheduler } from '../servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry, meterName } from '../telemetry/index.js';
import { OrderConsumer } from './orderConsumer.js';

export interface ConsumerOverrides {
  readonly meter?: Meter;
  readonly now?: () => Date;
}

/** The composition root: one Cosmos client and one consumer per process, from validated settings. */
export function createOrderConsumer(settings: Settings, overrides: ConsumerOverrides = {}): OrderConsumer {
  const container = createCosmosClient(settings.cosmos)
    .database(settings.cosmos.databaseName)
    .container(settings.cosmos.ordersContainerName);
  return new OrderConsumer({
    store: new CosmosDocumentStore(container),
    now: overrides.now ?? (() => new Date()),
    consumerName: settings.consumerName,
    markerTtlSeconds: settings.markerTtlSeconds,
    maxMessageBytes: settings.maxMessageBytes,
    maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
    orderArrivalWaitMs: settings.orderArrivalWaitMs,
    retry: settings.retry,
    scheduler: settings.retry.delayedRetryEnabled ? new ServiceBusRetryScheduler(settings.serviceBus, settings.ordersQueueName) : undefined,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(overrides.meter ?? metrics.getMeter(meterName))),
  });
}
