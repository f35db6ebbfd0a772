import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { CountingDocumentStore } from '../../../dev/store/countingDocumentStore.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { OrderConsumer } from '../../../src/orders/index.js';
import { RejectedDeliveries, rejectedDeliveriesMaxWeight } from '../../../src/consumer/index.js';
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

  it('holds at most its weight in text, pushing out the oldest first; an entry heavier than that is not kept and pushes nothing out', () => {
    const envelope = (sequenceNumber: number) => ({ messageId: `m${sequenceNumber}`, sequenceNumber, deliveryCount: 2, applicationProperties: {} });
    const memory = new RejectedDeliveries<string>(100, (text) => text.length, 10);
    memory.remember(envelope(1), 'aaaa'); // 4 + 2 for its MessageId
    memory.remember(envelope(2), 'bb'); // 2 + 2: 10 in all
    expect([memory.size, memory.weight]).toEqual([2, 10]);
    memory.remember(envelope(3), 'c'); // 3 more: the oldest goes
    expect(memory.recall(envelope(1))).toBeUndefined();
    expect([memory.size, memory.weight]).toEqual([2, 7]);
    memory.remember(envelope(2), 'b'); // remembered again: its old weight is given back
    expect(memory.weight).toBe(6);
    memory.remember(envelope(4), 'x'.repeat(20));
    expect(memory.recall(envelope(4))).toBeUndefined();
    expect([memory.size, memory.weight]).toEqual([2, 6]);
    expect(rejectedDeliveriesMaxWeight).toBe(2_000_000);
  });
});
