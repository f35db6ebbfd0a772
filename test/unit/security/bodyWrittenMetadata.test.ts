import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, TransientStoreError } from '../../../src/idempotency/index.js';
import type { CommitResult, WriteOperation } from '../../../src/idempotency/index.js';
import { OrderConsumer } from '../../../src/orders/index.js';
import { readReceivedMessage, scheduleDelayedRetry } from '../../../src/consumer/index.js';
import { envelopeFromInvocation } from '../../../src/servicebus/index.js';
import type { MessageEnvelope, ScheduledCopy } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { triggerMetadataAsTheHostSendsIt } from '../../support/hostBindingData.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { testRetryStateKey } from '../../support/signedRetryState.js';
import { RecordingLog } from '../../support/recordingLog.js';

// The host writes a JSON body's top-level properties over the broker's fields in the trigger
// metadata (test/support/hostBindingData.ts): `deliveryCount` and `sequenceNumber`, which the
// consumer trusts as the broker's own, are then whatever a sender put in its body.

/** A store whose commits to one partition fail for now until `heal` (a throttled or unreachable partition). */
class PartitionDownStore extends InMemoryDocumentStore {
  private down = true;
  constructor(private readonly downPartition: string) {
    super();
  }
  heal(): void {
    this.down = false;
  }
  override commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (this.down && partitionKey === this.downPartition) return Promise.reject(new TransientStoreError('503 Service Unavailable', 503));
    return super.commit(partitionKey, operations);
  }
}

function consumerOn(store: InMemoryDocumentStore) {
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

/** The envelope as processOrder builds it: from the invocation, with the body the handler was given. */
const envelopeOf: (context: Parameters<typeof envelopeFromInvocation>[0], body: unknown) => MessageEnvelope = envelopeFromInvocation;

/** One delivery as the handler sees it: the body as the library parsed it, the envelope from what the host sent. */
function deliver(consumer: OrderConsumer, broker: Record<string, unknown>, body: Record<string, unknown>, log: RecordingLog) {
  const triggerMetadata = triggerMetadataAsTheHostSendsIt({ Subject: 'OrderPlaced', Label: broker.Subject ?? 'OrderPlaced', ...broker }, body);
  return consumer.consume(envelopeOf({ triggerMetadata }, body), body, log);
}

describe('broker fields a message body can write (the host copies its top-level properties over them)', () => {
  it("a sender cannot make a valid message's redelivery be answered with another message's rejection", async () => {
    const store = new PartitionDownStore('o-77');
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    // A sender with Send rights learns the queue's next sequence numbers (scheduling a message answers
    // with its number; they grow by one) and knows the victim's MessageId (here the order id, as the
    // design's producer sets it). Its unreadable message names both in its body.
    const planted = await deliver(
      consumer,
      { MessageId: 'attacker-1', SequenceNumber: 500, DeliveryCount: 1 },
      { orderId: 'o-77', messageId: 'order-o-77', sequenceNumber: 901 },
      log,
    );
    expect(planted.outcome.kind).toBe('invalid');

    // The victim: a valid order, MessageId order-o-77, sequence number 901. Its first delivery meets
    // an ordinary fault (the partition is unavailable for now) and is abandoned; the broker redelivers it.
    const victim = orderPlaced('o-77');
    const first = await deliver(consumer, { MessageId: 'order-o-77', SequenceNumber: 901, DeliveryCount: 1 }, victim, log);
    expect(first.outcome.kind).toBe('retry');
    store.heal();
    const redelivered = await deliver(consumer, { MessageId: 'order-o-77', SequenceNumber: 901, DeliveryCount: 2 }, victim, log);

    // Answered from the planted rejection, it would be thrown until the broker dead-letters it.
    expect(redelivered.outcome.kind).toBe('created');
    expect(await store.read('o-77', 'o-77')).toBeDefined();
  });

  it("a body's sequenceNumber does not put a rejection in the instance's memory under another broker message's number", async () => {
    const store = new InMemoryDocumentStore();
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    await deliver(consumer, { MessageId: 'bad-1', SequenceNumber: 10, DeliveryCount: 1 }, { orderId: 'o-1', sequenceNumber: 11 }, log);
    // The broker's message 11 under the same MessageId (a producer's re-send, now readable, whose first
    // delivery lost its lock) is judged, not recalled.
    const valid = await deliver(consumer, { MessageId: 'bad-1', SequenceNumber: 11, DeliveryCount: 2 }, orderPlaced('o-1'), log);
    expect(valid.outcome.kind).toBe('created');
  });

  it("a structured CloudEvent's subject attribute does not stand for the broker's Subject: the order is created", async () => {
    const store = new InMemoryDocumentStore();
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    // The contract: the type in the Service Bus subject, or the CloudEvents type. The event's own
    // `subject` (what the event is about, here the order) is written over the broker's Subject.
    const event = { specversion: '1.0', id: 'e-1', source: '/shop', type: 'com.shop.OrderPlaced', subject: 'orders/o-88', data: orderPlaced('o-88') };
    const result = await deliver(
      consumer,
      { MessageId: 'e-1', SequenceNumber: 5, DeliveryCount: 1, ContentType: 'application/cloudevents+json', Subject: 'OrderPlaced' },
      event,
      log,
    );
    expect(result.outcome.kind === 'invalid' ? result.outcome.error.description : result.outcome.kind).toBe('created');
  });

  it('application properties keep what the broker carried when the body has an applicationProperties field', async () => {
    const store = new InMemoryDocumentStore();
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    // The key is pinned by idempotency-key (a producer's, or an operator's resubmitted copy's); the body's field is data.
    const body = { ...orderPlaced('o-89'), applicationProperties: { note: 'from the shop' } };
    const triggerMetadata = triggerMetadataAsTheHostSendsIt(
      {
        MessageId: 'copy-2',
        SequenceNumber: 6,
        DeliveryCount: 1,
        Subject: 'OrderPlaced',
        Label: 'OrderPlaced',
        ApplicationProperties: { 'idempotency-key': 'k-o-89' },
        UserProperties: { 'idempotency-key': 'k-o-89' },
      },
      body,
    );
    const result = await consumer.consume(envelopeOf({ triggerMetadata }, body), body, log);
    expect(result.dedupKey).toBe('k-o-89');
  });

  it('two broker messages under one MessageId whose bodies name a sequence number get delayed-retry copies of their own', async () => {
    // A conflict (another payment under the same MessageId) meets a store fault, as its original did:
    // a copy named like the original's is dropped by duplicate detection, and the conflict with it.
    const copies: ScheduledCopy[] = [];
    const scheduler = { schedule: (copy: ScheduledCopy) => Promise.resolve(void copies.push(copy)), close: () => Promise.resolve() };
    const nowMs = Date.parse('2026-12-03T12:00:00Z');
    const policy = { inInvocationMs: 10_000, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };
    const payment = paymentReceived('o-90', { paymentId: 'p-90' });
    for (const [sequenceNumber, body] of [
      [20, { ...payment, sequenceNumber: 1 }],
      [21, { ...payment, amount: 99, sequenceNumber: 1 }],
    ] as const) {
      const triggerMetadata = triggerMetadataAsTheHostSendsIt(
        { MessageId: 'pay-90', SequenceNumber: sequenceNumber, DeliveryCount: 1, Subject: 'PaymentReceived', Label: 'PaymentReceived' },
        body,
      );
      const outcome = await scheduleDelayedRetry(
        readReceivedMessage(envelopeOf({ triggerMetadata }, body), body, 262_144),
        { kind: 'retry', reason: '503' },
        { scheduler, policy, now: () => new Date(nowMs), failedAtEpochMs: nowMs, signingKey: testRetryStateKey },
      );
      expect(outcome.kind).toBe('rescheduled');
    }
    expect(copies).toHaveLength(2);
    expect(copies[0]?.messageId).not.toBe(copies[1]?.messageId);
  });

  it('a body only the host can read (Newtonsoft takes single quotes, JSON.parse does not) cannot plant a rejection either', async () => {
    const store = new PartitionDownStore('o-78');
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    // The host parses the text leniently and writes its names over the metadata; the library cannot
    // parse it, so the handler gets the text, and the consumer rejects it as not JSON.
    const text = "{'orderId': 'o-78', 'messageId': 'order-o-78', 'sequenceNumber': 902}";
    const asTheHostReadIt = { orderId: 'o-78', messageId: 'order-o-78', sequenceNumber: 902 };
    const triggerMetadata = triggerMetadataAsTheHostSendsIt(
      { MessageId: 'attacker-2', SequenceNumber: 501, DeliveryCount: 1, Subject: 'OrderPlaced', Label: 'OrderPlaced' },
      asTheHostReadIt,
    );
    const planted = await consumer.consume(envelopeOf({ triggerMetadata }, text), text, log);
    expect(planted.outcome.kind === 'invalid' && planted.outcome.error.code).toBe('InvalidJson');

    const victim = orderPlaced('o-78');
    expect((await deliver(consumer, { MessageId: 'order-o-78', SequenceNumber: 902, DeliveryCount: 1 }, victim, log)).outcome.kind).toBe('retry');
    store.heal();
    const redelivered = await deliver(consumer, { MessageId: 'order-o-78', SequenceNumber: 902, DeliveryCount: 2 }, victim, log);
    expect(redelivered.outcome.kind).toBe('created');
  });

  it('a name the host matches only when upper-cased (a long s for the S) cannot plant a rejection either', async () => {
    const store = new PartitionDownStore('o-79');
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    const planted = await deliver(
      consumer,
      { MessageId: 'attacker-3', SequenceNumber: 502, DeliveryCount: 1 },
      { orderId: 'o-79', messageId: 'order-o-79', '\u017fequenceNumber': 903 },
      log,
    );
    expect(planted.outcome.kind).toBe('invalid');

    const victim = orderPlaced('o-79');
    expect((await deliver(consumer, { MessageId: 'order-o-79', SequenceNumber: 903, DeliveryCount: 1 }, victim, log)).outcome.kind).toBe('retry');
    store.heal();
    const redelivered = await deliver(consumer, { MessageId: 'order-o-79', SequenceNumber: 903, DeliveryCount: 2 }, victim, log);
    expect(redelivered.outcome.kind).toBe('created');
  });
});
