import type { Settings } from '../config.js';
import { resolveRuntime } from '../consumer/index.js';
import type { RuntimeOverrides } from '../consumer/index.js';
import { ServiceBusRetryScheduler } from '../servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../telemetry/index.js';
import { OrderConsumer } from './orderConsumer.js';

/** The composition root: one Cosmos client and one consumer per process, from validated settings. */
export function createOrderConsumer(settings: Settings, overrides: RuntimeOverrides = {}): OrderConsumer {
  const { meter, ...runtime } = resolveRuntime(settings, overrides);
  return new OrderConsumer({
    ...runtime,
    consumerName: settings.consumerName,
    orderEventsDestination: settings.outbox.orderEventsTopicName,
    maxMessageBytes: settings.maxMessageBytes,
    statusVersionMaxStep: settings.statusVersionMaxStep,
    retry: settings.retry,
    retryStateKey: settings.retry.stateSigningKey,
    retryStatePreviousKey: settings.retry.previousStateSigningKey,
    scheduler: settings.retry.delayedRetryEnabled ? new ServiceBusRetryScheduler(settings.serviceBus, settings.ordersQueueName) : undefined,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(meter)),
  });
}
