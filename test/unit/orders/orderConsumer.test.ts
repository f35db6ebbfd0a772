import { describe, expect, it } from 'vitest';
import { metrics } from '@opentelemetry/api';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { OrderConsumer, rejectedMessagesPartition } from '../../../src/orders/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';

// The flows over the reference in-memory store: pure logic, fixed clock.
function consumerOn(store: InMemoryDocumentStore, consumerName?: string) {
  return new OrderConsumer({
    store,
    consumerName,
    now: () => new Date('2026-11-30T12:00:00Z'),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 5,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
  });
}

const delivery = (messageId: string, subject: string, deliveryCount = 1) =>
  envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: 1 });

describe('OrderConsumer over the in-memory store', () => {
  it('keeps a payment counted once while its marker lives, and says why the marker must outlive redeliveries', async () => {
    let nowMs = Date.parse('2026-11-30T12:00:00Z');
    const store = new InMemoryDocumentStore(() => nowMs);
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    const payment = paymentReceived('o1');
    await consumer.consume(delivery('m-o1', 'OrderPlaced'), orderPlaced('o1'), log);
    await consumer.consume(delivery('pay-1', 'PaymentReceived'), payment, log);
    nowMs += 3_599_000;
    await consumer.consume(delivery('pay-1', 'PaymentReceived', 2), payment, log);
    expect(log.outcomes()).toEqual(['created', 'created', 'duplicate']);
    // Past the marker's ttl a late copy would be applied again: hence the start-up retention check.
    nowMs += 2_000;
    await consumer.consume(delivery('pay-1', 'PaymentReceived', 3), payment, log);
    expect((await store.read<OrderDocument>('o1', 'o1'))?.document.paymentCount).toBe(2);
  });

  it('lets two consumers with different names each apply the same message once in one shared store', async () => {
    const store = new InMemoryDocumentStore();
    await consumerOn(store).consume(delivery('m-o2', 'OrderPlaced'), orderPlaced('o2'), new RecordingLog());
    const billing = consumerOn(store, 'billing');
    const audit = consumerOn(store, 'audit');
    const log = new RecordingLog();
    const payment = paymentReceived('o2', { amount: 1 });
    for (const consumer of [billing, audit, billing, audit]) {
      await consumer.consume(delivery('pay-2', 'PaymentReceived'), payment, log);
    }
    expect(log.outcomes()).toEqual(['created', 'created', 'duplicate', 'duplicate']);
    const markers = store
      .list('o2')
      .filter((d) => (d as { docType?: string }).docType === 'inbox')
      .map((d) => d.id);
    expect(markers.sort()).toEqual(['inbox|audit%7Cpay-2', 'inbox|billing%7Cpay-2']);
  });

  it("keeps each consumer's rejection of the same message apart", async () => {
    const store = new InMemoryDocumentStore();
    for (const name of ['billing', 'audit']) {
      await consumerOn(store, name).consume(delivery('poison', 'OrderPlaced'), 'not json', new RecordingLog());
    }
    const records = store
      .list(rejectedMessagesPartition('poison'))
      .map((d) => d.id)
      .sort();
    expect(records).toEqual(['rejection|audit|poison', 'rejection|billing|poison']);
  });
});
