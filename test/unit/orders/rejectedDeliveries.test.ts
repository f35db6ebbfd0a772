import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { CountingDocumentStore } from '../../../dev/store/countingDocumentStore.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { OrderConsumer, rejectedMessagesPartition } from '../../../src/orders/index.js';
import { RejectedDeliveries } from '../../../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';

// An unreadable message comes back maxDeliveryCount times (the trigger cannot dead-letter with a
// reason): its redeliveries on the instance that rejected it cost no parse and no store call.
function consumerOn(store: CountingDocumentStore, rejectedDeliveriesCapacity?: number) {
  return new OrderConsumer({
    store,
    now: () => new Date('2026-11-30T12:00:00Z'),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 5,
    rejectedDeliveriesCapacity,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
  });
}
const delivery = (messageId: string | undefined, subject: string, deliveryCount: number, sequenceNumber: number | undefined) =>
  envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber });
const unreadable = '{"orderId":';
const trips = async (store: CountingDocumentStore, deliver: () => Promise<unknown>) => {
  store.reset();
  await deliver();
  return store.trips;
};

describe('redeliveries of an unreadable message this instance rejected', () => {
  it('are answered with the same rejection, with no store call, once its record is written', async () => {
    const store = new CountingDocumentStore(new InMemoryDocumentStore());
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    expect(await trips(store, () => consumer.consume(delivery('bad-1', 'OrderPlaced', 1, 41), unreadable, log))).toBe(1);
    for (const count of [2, 3, 10]) {
      expect(
        await trips(store, async () => {
          const result = await consumer.consume(delivery('bad-1', 'OrderPlaced', count, 41), unreadable, log);
          expect(result.outcome.kind).toBe('invalid');
          expect(result.outcome.kind === 'invalid' && result.outcome.error.code).toBe('InvalidJson');
        }),
      ).toBe(0);
    }
    // Each delivery is still reported, with its reason: the log and the metrics see all four.
    expect(log.outcomes()).toEqual(['invalid', 'invalid', 'invalid', 'invalid']);
  });

  it('are judged afresh on another instance, on a first delivery, or under another sequence number or MessageId', async () => {
    const store = new CountingDocumentStore(new InMemoryDocumentStore());
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    await consumer.consume(delivery('bad-2', 'OrderPlaced', 1, 42), unreadable, log);
    // Another instance: one point read of the record its first delivery wrote.
    expect(await trips(store, () => consumerOn(store).consume(delivery('bad-2', 'OrderPlaced', 2, 42), unreadable, log))).toBe(1);
    // Delivery count 1 under a known sequence number is not a redelivery.
    expect(await trips(store, () => consumer.consume(delivery('bad-2', 'OrderPlaced', 1, 42), unreadable, log))).toBeGreaterThan(0);
    // A resubmitted copy (a new sequence number) and a sender reusing the sequence number's slot with another MessageId.
    expect(await trips(store, () => consumer.consume(delivery('bad-2', 'OrderPlaced', 2, 43), unreadable, log))).toBe(1);
    expect(await trips(store, () => consumer.consume(delivery('bad-3', 'OrderPlaced', 2, 42), unreadable, log))).toBeGreaterThan(0);
    // Without a sequence number or a MessageId nothing is remembered.
    await consumer.consume(delivery('bad-4', 'OrderPlaced', 1, undefined), unreadable, log);
    expect(await trips(store, () => consumer.consume(delivery('bad-4', 'OrderPlaced', 2, undefined), unreadable, log))).toBe(1);
  });

  it('never answers a readable message from memory, even under a remembered sequence number', async () => {
    const store = new CountingDocumentStore(new InMemoryDocumentStore());
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    await consumer.consume(delivery('bad-5', 'OrderPlaced', 1, 50), unreadable, log);
    // A readable order under another MessageId but the same sequence number (another entity's numbering) is processed.
    const result = await consumer.consume(delivery('good-5', 'OrderPlaced', 2, 50), orderPlaced('o-5'), log);
    expect(result.outcome.kind).toBe('created');
  });

  it('does not remember what depends on stored state: a payment in another currency than its order is judged again', async () => {
    const store = new CountingDocumentStore(new InMemoryDocumentStore());
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    const payment = paymentReceived('o-6', { currency: 'USD' });
    await consumer.consume(delivery('m-o6', 'OrderPlaced', 1, 60), orderPlaced('o-6'), log);
    const first = await consumer.consume(delivery('pay-o6', 'PaymentReceived', 1, 61), payment, log);
    expect(first.outcome.kind === 'invalid' && first.outcome.error.code).toBe('CurrencyMismatch');
    expect(await trips(store, () => consumer.consume(delivery('pay-o6', 'PaymentReceived', 2, 61), payment, log))).toBeGreaterThan(0);
  });

  it('does not remember a rejection whose record could not be written: the redelivery records it', async () => {
    const inner = new InMemoryDocumentStore();
    let down = true;
    const flaky = Object.assign(Object.create(inner) as InMemoryDocumentStore, {
      commit: (pk: string, ops: Parameters<InMemoryDocumentStore['commit']>[1]) =>
        down ? Promise.reject(new Error('503 Service Unavailable')) : inner.commit(pk, ops),
    });
    const store = new CountingDocumentStore(flaky);
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    const first = await consumer.consume(delivery('bad-7', 'OrderPlaced', 1, 70), unreadable, log);
    expect(first.outcome.kind).toBe('retry');
    down = false;
    const second = await consumer.consume(delivery('bad-7', 'OrderPlaced', 2, 70), unreadable, log);
    expect(second.outcome.kind).toBe('invalid');
    expect(inner.list(rejectedMessagesPartition('bad-7')).map((d) => d.id)).toHaveLength(1);
  });
});

describe('what the rejected-delivery memory keeps of a rejection', () => {
  it('keeps a short reason whole, and a sender-sized one cut to 500 characters, saying where the whole is', async () => {
    const store = new CountingDocumentStore(new InMemoryDocumentStore());
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    const reasonOf = (result: Awaited<ReturnType<OrderConsumer['consume']>>) => (result.outcome.kind === 'invalid' ? result.outcome.error.description : '');
    const short = reasonOf(await consumer.consume(delivery('bad-s', 'OrderPlaced', 1, 80), unreadable, log));
    expect(reasonOf(await consumer.consume(delivery('bad-s', 'OrderPlaced', 2, 80), unreadable, log))).toBe(short);
    const longType = 'T'.repeat(2_000);
    const whole = reasonOf(await consumer.consume(delivery('bad-l', longType, 1, 81), {}, log));
    expect(whole.length).toBeGreaterThan(2_000);
    const kept = reasonOf(await consumer.consume(delivery('bad-l', longType, 2, 81), {}, log));
    expect(kept).toBe(`${whole.slice(0, 500)}… (cut; the rejection record holds the whole reason)`);
  });

  it('never takes a transient failure for a rejection: the store failing a valid order is a retry, nothing recorded', async () => {
    const inner = new InMemoryDocumentStore();
    const failing = Object.assign(Object.create(inner) as InMemoryDocumentStore, {
      commit: (pk: string, ops: Parameters<InMemoryDocumentStore['commit']>[1]) =>
        pk === 'o-90' ? Promise.reject(new Error('socket hang up')) : inner.commit(pk, ops),
    });
    const consumer = consumerOn(new CountingDocumentStore(failing));
    const result = await consumer.consume(delivery('m-o90', 'OrderPlaced', 1, 90), orderPlaced('o-90'), new RecordingLog());
    expect(result.outcome.kind).toBe('retry');
    expect(inner.list(rejectedMessagesPartition('m-o90'))).toEqual([]);
  });
});

describe('RejectedDeliveries', () => {
  const envelope = (sequenceNumber: number, deliveryCount = 2) => ({
    messageId: `m-${sequenceNumber}`,
    sequenceNumber,
    deliveryCount,
    applicationProperties: {},
  });

  it('holds at most its capacity, pushing out the oldest first; remembering again makes an entry the newest', () => {
    const memory = new RejectedDeliveries<string>(2);
    memory.remember(envelope(1), 'one');
    memory.remember(envelope(2), 'two');
    memory.remember(envelope(1), 'one again');
    memory.remember(envelope(3), 'three');
    expect(memory.size).toBe(2);
    expect(memory.recall(envelope(2))).toBeUndefined();
    expect(memory.recall(envelope(1))).toEqual({ result: 'one again' });
    expect(memory.recall(envelope(3))).toEqual({ result: 'three' });
  });

  it('recalls only a redelivery: delivery count above 1, and a missing count is a first delivery', () => {
    const memory = new RejectedDeliveries<string>();
    memory.remember(envelope(5), 'five');
    expect(memory.recall(envelope(5, 1))).toBeUndefined();
    expect(memory.recall({ messageId: 'm-5', sequenceNumber: 5, applicationProperties: {} })).toBeUndefined();
    expect(memory.recall(envelope(5, 2))).toEqual({ result: 'five' });
    expect(memory.recall({ sequenceNumber: 5, deliveryCount: 2, applicationProperties: {} })).toBeUndefined();
  });

  it('ignores a message without a MessageId or a sequence number', () => {
    const memory = new RejectedDeliveries<string>();
    memory.remember({ sequenceNumber: 8, deliveryCount: 1, applicationProperties: {} }, 'x');
    memory.remember({ messageId: 'm-9', deliveryCount: 1, applicationProperties: {} }, 'y');
    expect(memory.size).toBe(0);
  });

  it('defaults to 10,000 broker messages', () => {
    const memory = new RejectedDeliveries<number>();
    for (let n = 1; n <= 10_001; n += 1) memory.remember(envelope(n), n);
    expect(memory.size).toBe(10_000);
    expect(memory.recall(envelope(1))).toBeUndefined();
    expect(memory.recall(envelope(2))).toEqual({ result: 2 });
  });
});
