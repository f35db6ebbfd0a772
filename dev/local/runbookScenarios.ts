import type { Container } from '@azure/cosmos';
import { fingerprintPayload } from '../../src/idempotency/index.js';
import { outboxDocumentId } from '../../src/orders/index.js';
import type { OutboxDocument } from '../../src/outbox/index.js';
import { newOutboxDocument, orderIntakeSource } from '../../src/outbox/index.js';
import type { ShipmentRecord } from '../../src/shipments/index.js';
import { shipmentRecordId } from '../../src/shipments/index.js';
import type { LocalStack } from './localStack.js';
import { waitUntil } from './waitUntil.js';

/**
 * The runbook's other scenarios, left as the app leaves them (docs/operations.md, "Runbook, step by
 * step"): a failed outbox entry, an escalated shipment, and a dead letter in each entity of
 * infra/servicebus-queues.json. Written where the app would write them, not produced by outages:
 * the demo must be ready in seconds, and an outage of the publisher's queue or the carrier cannot be
 * staged for one entry alone.
 */
export async function seedOperatorScenarios(stack: LocalStack, container: Container): Promise<void> {
  const now = new Date().toISOString();
  await container.items.create(failedIntakeEntry(now));
  await container.items.create(escalatedShipment(now));
  const accepted = await acceptedEvent(container, 'runbook-order-2');
  deadLetter(
    stack,
    'orders',
    {
      message_id: 'runbook-retry',
      subject: 'OrderPlaced',
      content_type: 'application/json',
      body: { orderId: 'runbook-order-4', customerId: 'customer-1', currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 12 }], placedAt: now },
    },
    'the consumer crashed on every delivery (a bug fixed since)',
  );
  // Copies of the order's OrderAccepted as the publisher sent it (same key): a resubmit is absorbed wherever it was applied already.
  for (const subscription of ['fulfilment', 'audit']) {
    deadLetter(
      stack,
      `order-events/subscriptions/${subscription}`,
      {
        message_id: `runbook-${subscription}`,
        subject: accepted.message.subject,
        content_type: accepted.message.contentType,
        group_id: accepted.message.sessionId,
        body: accepted.message.body,
        application_properties: { ...accepted.message.applicationProperties },
      },
      `the ${subscription} consumer was down (fixed since)`,
    );
  }
}

/** An OrderPlaced the HTTP intake accepted, which the publisher could not send: the queue was missing then. */
function failedIntakeEntry(now: string): OutboxDocument {
  const entry = newOutboxDocument({
    id: 'runbook-intake-order-3',
    orderId: 'runbook-order-3',
    eventType: 'OrderPlaced',
    destination: 'orders',
    body: { orderId: 'runbook-order-3', customerId: 'customer-1', currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 25 }], placedAt: now },
    createdAt: now,
    messageId: 'runbook-order-3',
    source: orderIntakeSource,
  });
  return {
    ...entry,
    state: 'failed',
    failure: { reason: 'MessagingEntityNotFound', detail: "the queue 'orders' did not exist when the publisher sent the entry (deployed since)", at: now },
  };
}

/** A booking the reconciler gave up on: the carrier gave no answer for the whole transient budget. */
function escalatedShipment(now: string): ShipmentRecord {
  const request = { orderReference: 'runbook-order-1', customerId: 'customer-1', declaredValue: 39, currency: 'EUR' };
  return {
    id: shipmentRecordId('runbook-shipment'),
    orderId: 'runbook-order-1',
    docType: 'shipment',
    idempotencyKey: 'runbook-shipment',
    request,
    requestFingerprint: fingerprintPayload('ShipmentRequest', request),
    state: 'escalated',
    owner: 'reconciler',
    attempt: 1,
    leaseExpiresAt: now,
    reconcileAttempts: 0,
    startedAt: now,
    updatedAt: now,
    escalation: { reason: 'the carrier gave no answer for 86400 s, the transient retry budget (TRANSIENT_RETRY_BUDGET_SECONDS)', at: now },
  };
}

async function acceptedEvent(container: Container, orderId: string): Promise<OutboxDocument> {
  const read = async () => (await container.item(outboxDocumentId(orderId), orderId).read<OutboxDocument>()).resource;
  await waitUntil(`the OrderAccepted outbox entry of ${orderId}`, async () => (await read()) !== undefined, 30_000, 100);
  return (await read()) as OutboxDocument;
}

/** Straight into the entity's dead-letter queue, as its consumer would have left it after the last delivery. */
function deadLetter(stack: LocalStack, entity: string, message: Record<string, unknown>, description: string): void {
  const dlq = stack.serviceBus.entity(entity)?.deadLetterQueue;
  if (!dlq) throw new Error(`the local Service Bus has no entity ${entity}`);
  const properties = {
    ...((message.application_properties as Record<string, unknown> | undefined) ?? {}),
    DeadLetterReason: 'MaxDeliveryCountExceeded',
    DeadLetterErrorDescription: description,
  };
  dlq.accept({ ...message, application_properties: properties } as Parameters<typeof dlq.accept>[0]);
}
