import { z } from 'zod';
import { PermanentMessageError, fingerprintPayload } from '../idempotency/index.js';
import { describeIssues, orderIdSchema } from '../orders/index.js';
import { contentOf, keyOf, readReceivedMessage } from '../consumer/index.js';
import type { ReceivedMessage } from '../consumer/index.js';
import { refusingUnreadable } from '../servicebus/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import type { ShipmentRequest } from './carrierClient.js';

/** The OrderAccepted event as the outbox publishes it (src/orders/documents.ts). */
const orderAcceptedSchema = z.object({
  orderId: orderIdSchema,
  customerId: z.string().min(1).max(128),
  currency: z.string().min(3).max(3),
  total: z.number().nonnegative(),
  placedAt: z.iso.datetime({ offset: true }),
});

/** One OrderAccepted delivery, ready for the two-phase booking: its key, its order, what to ask the carrier. */
export interface ShipmentEvent {
  /** The event's dedup key: the shipment record's identity and the carrier's Idempotency-Key. */
  readonly key: string;
  readonly messageId?: string;
  readonly orderId: string;
  readonly request: ShipmentRequest;
  readonly fingerprint: string;
}

/**
 * Reads an OrderAccepted delivery. The key is the event's own (its CloudEvents source and id, which
 * the outbox sets from the entry id, or an `idempotency-key` pinned by a resubmit), so every copy of
 * one event books under one key. Throws `PermanentMessageError` for what no redelivery can fix.
 */
export function parseShipmentEvent(envelope: MessageEnvelope, body: unknown, maxMessageBytes: number): ShipmentEvent {
  return parseReceivedShipmentEvent(readReceivedMessage(envelope, body, maxMessageBytes));
}

/** The fulfilment consumer's parse, from the delivery the pipeline read once. */
export function parseReceivedShipmentEvent(message: ReceivedMessage): ShipmentEvent {
  return refusingUnreadable(() => parseShipmentContent(message));
}

function parseShipmentContent(message: ReceivedMessage): ShipmentEvent {
  const { envelope } = message;
  const { cloudEvent, payload } = contentOf(message);
  // The orders queue's key rule, without a consumer prefix: the carrier sees the event's own key.
  const key = keyOf(envelope, cloudEvent);
  if (!key) throw new PermanentMessageError('NoDedupKey', 'the event has no idempotency-key property, CloudEvents source and id, or MessageId');
  const type = envelope.subject ?? cloudEvent?.type?.split('.').pop();
  if (type !== 'OrderAccepted') {
    throw new PermanentMessageError(
      'UnknownMessageType',
      `type ${JSON.stringify(type ?? null)} is not OrderAccepted, the one event requestShipment handles`,
      key.value,
    );
  }
  const parsed = orderAcceptedSchema.safeParse(payload);
  if (!parsed.success) throw new PermanentMessageError('SchemaViolation', `OrderAccepted: ${describeIssues(parsed.error)}`, key.value);
  const event = parsed.data;
  const request: ShipmentRequest = { orderReference: event.orderId, customerId: event.customerId, declaredValue: event.total, currency: event.currency };
  return { key: key.value, messageId: envelope.messageId, orderId: event.orderId, request, fingerprint: fingerprintPayload('ShipmentRequest', request) };
}
