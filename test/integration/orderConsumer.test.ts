import type { Container, CosmosClient } from '@azure/cosmos';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CountingDocumentStore } from '../../dev/store/countingDocumentStore.js';
import { CosmosDocumentStore } from '../../src/cosmos/index.js';
import { OrderConsumer } from '../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../src/telemetry/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { RecordingLog } from '../support/recordingLog.js';
import { TestMetricReader } from '../support/testMetricReader.js';

let client: CosmosClient;
let container: Container;
let store: CountingDocumentStore;
let reader: TestMetricReader;
let consumer: OrderConsumer;
let anotherInstance: () => OrderConsumer;

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  store = new CountingDocumentStore(new CosmosDocumentStore(container));
  reader = new TestMetricReader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
  anotherInstance = () =>
    new OrderConsumer({
      store,
      now: () => new Date('2026-11-30T12:00:00Z'),
      markerTtlSeconds: 3600,
      orderEventsDestination: 'order-events',
      maxMessageBytes: 262144,
      maxConcurrencyAttempts: 10,
      telemetry: new OutcomeTelemetry(new OutcomeMetrics(meter)),
    });
  consumer = anotherInstance();
});
afterAll(() => client.dispose());

const envelope = (messageId: string, deliveryCount: number, sequenceNumber: number, subject = 'OrderPlaced') =>
  envelopeFromTriggerMetadata({ messageId, deliveryCount, sequenceNumber, subject, correlationId: 'c-9' });

describe('OrderConsumer', () => {
  describe('store round trips per path (the cost of a message is its round trips)', () => {
    const trips = async (deliver: () => Promise<unknown>) => {
      store.reset();
      await deliver();
      return { reads: store.reads, commits: store.commits };
    };
    const consume = (messageId: string, deliveryCount: number, sequenceNumber: number, body: unknown) =>
      consumer.consume(envelope(messageId, deliveryCount, sequenceNumber), body, new RecordingLog());

    it('a new order: one batch, no read', async () => {
      const orderId = newOrderId();
      expect(await trips(() => consume(`m-${orderId}`, 1, 200, orderPlaced(orderId)))).toEqual({ reads: 0, commits: 1 });
    });

    it('a duplicate: on a first delivery the 409 and one read; on a redelivery, which reads first, one read', async () => {
      const orderId = newOrderId();
      await consume(`m-${orderId}`, 1, 201, orderPlaced(orderId));
      expect(await trips(() => consume(`m-${orderId}`, 1, 202, orderPlaced(orderId)))).toEqual({ reads: 1, commits: 1 });
      expect(await trips(() => consume(`m-${orderId}`, 4, 202, orderPlaced(orderId)))).toEqual({ reads: 1, commits: 0 });
    });

    it('a redelivery of a new order whose first attempt wrote nothing: the read, then the batch', async () => {
      const orderId = newOrderId();
      expect(await trips(() => consume(`m-${orderId}`, 2, 203, orderPlaced(orderId)))).toEqual({ reads: 1, commits: 1 });
    });

    it('a payment duplicate, redelivered: one read of its own inbox marker, nothing written', async () => {
      const orderId = newOrderId();
      await consume(`m-${orderId}`, 1, 204, orderPlaced(orderId));
      const payment = paymentReceived(orderId);
      const pay = (deliveryCount: number) => consumer.consume(envelope(`p-${orderId}`, deliveryCount, 205, 'PaymentReceived'), payment, new RecordingLog());
      expect(await trips(() => pay(1))).toEqual({ reads: 1, commits: 2 });
      expect(await trips(() => pay(2))).toEqual({ reads: 1, commits: 0 });
    });

    it('a conflict: three on its first delivery, two on each redelivery (the read, then the record and the rejection in one batch)', async () => {
      const orderId = newOrderId();
      await consume('m-a', 1, 100, orderPlaced(orderId));
      const conflicting = orderPlaced(orderId, { customerId: 'other' });
      expect(await trips(() => consume('m-b', 1, 101, conflicting))).toEqual({ reads: 1, commits: 2 });
      const again = await consumer.consume(envelope('m-b', 2, 101), conflicting, new RecordingLog());
      expect(again.outcome.kind).toBe('conflict');
      expect(await trips(() => consume('m-b', 3, 101, conflicting))).toEqual({ reads: 1, commits: 1 });
    });

    it('an invalid message: one write on its first delivery; a redelivery costs nothing on the instance that rejected it, one point read of its own #rejected-<n> on another, no write', async () => {
      expect(await trips(() => consume('bad-1', 1, 300, '{"orderId": '))).toEqual({ reads: 0, commits: 1 });
      expect(await trips(() => consume('bad-1', 2, 300, '{"orderId": '))).toEqual({ reads: 0, commits: 0 });
      const other = anotherInstance();
      expect(await trips(() => other.consume(envelope('bad-1', 10, 300), '{"orderId": ', new RecordingLog()))).toEqual({ reads: 1, commits: 0 });
    });
  });

  it('records a conflict whose message has no MessageId (keyed by idempotency-key), though no rejection can name it', async () => {
    const orderId = newOrderId();
    await consumer.consume(envelope(`m-${orderId}`, 1, 500), orderPlaced(orderId), new RecordingLog());
    const keyed = envelopeFromTriggerMetadata({
      deliveryCount: 1,
      sequenceNumber: 501,
      subject: 'OrderPlaced',
      applicationProperties: { 'idempotency-key': `k-${orderId}` },
    });
    const result = await consumer.consume(keyed, orderPlaced(orderId, { customerId: 'other' }), new RecordingLog());
    expect(result.outcome.kind).toBe('conflict');
    const conflicts = (
      await container.items
        .query({ query: "SELECT * FROM c WHERE c.orderId = @o AND c.docType = 'conflict'", parameters: [{ name: '@o', value: orderId }] })
        .fetchAll()
    ).resources;
    expect(conflicts).toEqual([expect.objectContaining({ dedupKey: `k-${orderId}`, existing: expect.objectContaining({ documentId: orderId }) })]);
  });

  it('writes one structured line per delivery with the fields an operator searches by', async () => {
    const orderId = newOrderId();
    const log = new RecordingLog();
    await consumer.consume(envelope(`m-${orderId}`, 1, 300), orderPlaced(orderId), log);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).toEqual({
      level: 'info',
      record: {
        event: 'order-message',
        outcome: 'created',
        dedupKey: `m-${orderId}`,
        messageId: `m-${orderId}`,
        correlationId: 'c-9',
        deliveryCount: 1,
        orderId,
        type: 'OrderPlaced',
        durationMs: expect.any(Number),
      },
    });
  });

  it('counts outcomes by kind and type through OpenTelemetry', async () => {
    const orderId = newOrderId();
    const log = new RecordingLog();
    await consumer.consume(envelope(`m-${orderId}`, 1, 400), orderPlaced(orderId), log);
    await consumer.consume(envelope(`m-${orderId}`, 2, 400), orderPlaced(orderId), log);
    await consumer.consume(envelope(`m-${orderId}`, 3, 400), orderPlaced(orderId), log);
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'orders.messages');
    const count = (outcome: string) => metric?.dataPoints.find((p) => p.attributes.outcome === outcome && p.attributes.type === 'OrderPlaced')?.value;
    expect(count('duplicate')).toBeGreaterThanOrEqual(2);
    expect(count('created')).toBeGreaterThanOrEqual(1);
    const histogram = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'orders.message.duration');
    expect(histogram?.descriptor.unit).toBe('ms');
  });
});
