import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { InvocationContext } from '@azure/functions';
import { isFunctionDisabled, loadSettings } from '../src/config.js';
import { throwUnlessCompletable } from '../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../src/servicebus/index.js';
import { createShipmentConsumer } from '../src/shipments/index.js';

// Disabled (no carrier configured): the host starts no listener, and nothing here asks for CARRIER_API_URL.
const consumer = isFunctionDisabled('requestShipment') ? undefined : createShipmentConsumer(loadSettings());

/**
 * Books the shipment of one OrderAccepted event with the carrier, exactly once in effect: returning
 * completes the delivery, throwing abandons it (a carrier refusal ends in the dead-letter queue).
 */
export async function requestShipment(message: unknown, context: InvocationContext): Promise<void> {
  const invocation = { invocationId: context.invocationId, traceparent: context.traceContext?.traceParent ?? undefined };
  if (!consumer) throw new Error('requestShipment is disabled (AzureWebJobs.requestShipment.Disabled)');
  const result = await consumer.consume(envelopeFromTriggerMetadata(context.triggerMetadata, message), message, context, invocation);
  throwUnlessCompletable(result.outcome);
}

app.serviceBusTopic('requestShipment', {
  topicName: '%ORDER_EVENTS_TOPIC_NAME%',
  subscriptionName: '%FULFILMENT_SUBSCRIPTION_NAME%',
  connection: 'ServiceBusConnection',
  cardinality: 'one',
  // The topic trigger's options have no autoCompleteMessages: host.json's (true) applies.
  handler: requestShipment,
});
