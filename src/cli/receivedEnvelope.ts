import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import type { MessageEnvelope } from '../servicebus/index.js';

/** The consumer's view of a message the SDK received, so the tool derives keys exactly as the consumer does. */
export function envelopeOfReceived(m: ServiceBusReceivedMessage): MessageEnvelope {
  return {
    messageId: m.messageId === undefined ? undefined : String(m.messageId),
    correlationId: m.correlationId === undefined ? undefined : String(m.correlationId),
    contentType: m.contentType,
    subject: m.subject,
    deliveryCount: m.deliveryCount === undefined ? undefined : m.deliveryCount + 1,
    sequenceNumber: m.sequenceNumber?.toNumber(),
    enqueuedTimeUtc: m.enqueuedTimeUtc?.toISOString(),
    applicationProperties: m.applicationProperties ?? {},
  };
}
