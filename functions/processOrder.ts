import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { InvocationContext } from '@azure/functions';
import { loadSettings } from '../src/config.js';
import { throwUnlessCompletable } from '../src/consumer/index.js';
import { createOrderConsumer } from '../src/orders/index.js';
import { envelopeFromInvocation } from '../src/servicebus/index.js';

// Built when the worker loads the app: a bad setting stops start-up with its name, not the first message.
const consumer = createOrderConsumer(loadSettings());

/** Adapts one Service Bus delivery to the consumer flow; returning completes it, throwing abandons it. */
export async function processOrder(message: unknown, context: InvocationContext): Promise<void> {
  const result = await consumer.consume(envelopeFromInvocation(context, message), message, context);
  throwUnlessCompletable(result.outcome);
}

app.serviceBusQueue('processOrder', {
  queueName: '%ORDERS_QUEUE_NAME%',
  connection: 'ServiceBusConnection',
  cardinality: 'one',
  autoCompleteMessages: true,
  handler: processOrder,
});
