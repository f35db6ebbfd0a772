import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { CountingDocumentStore } from '../../../dev/store/countingDocumentStore.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { OrderConsumer } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { RecordingLog } from '../../support/recordingLog.js';

// The memory of rejected messages is bounded by count (10,000); what each entry holds must be
// bounded too, or a flood of large unreadable messages is kept whole, 10,000 times over.
function consumerOn(store: CountingDocumentStore) {
  return new OrderConsumer({
    store,
    now: () => new Date('2026-12-03T12:00:00Z'),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 5,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
  });
}

describe('what the instance remembers of a rejected message', () => {
  it('is bounded whatever the sender wrote: a 200,000-character type name is not kept', async () => {
    const store = new CountingDocumentStore(new InMemoryDocumentStore());
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    // No subject: the type comes from the body's `type` field, quoted in the rejection's description.
    const body = { type: 'x'.repeat(200_000) };
    const first = await consumer.consume(envelopeFromTriggerMetadata({ messageId: 'big-1', deliveryCount: 1, sequenceNumber: 31 }), body, log);
    expect(first.outcome.kind === 'invalid' && first.outcome.error.code).toBe('UnknownMessageType');

    store.reset();
    const again = await consumer.consume(envelopeFromTriggerMetadata({ messageId: 'big-1', deliveryCount: 2, sequenceNumber: 31 }), body, log);
    expect(store.trips).toBe(0); // answered from memory
    expect(again.outcome.kind === 'invalid' && again.outcome.error.code).toBe('UnknownMessageType');
    const held = again.outcome.kind === 'invalid' ? again.outcome.error.description.length + again.outcome.error.message.length : Infinity;
    expect(held).toBeLessThanOrEqual(2_000);
  });
});
