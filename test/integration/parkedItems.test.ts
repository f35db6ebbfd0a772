import type { Container, CosmosClient } from '@azure/cosmos';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CountingDocumentStore } from '../../dev/store/countingDocumentStore.js';
import { loadSettings } from '../../src/config.js';
import { CosmosDocumentStore } from '../../src/cosmos/index.js';
import { OrderConsumer, createParkedItemSweeper } from '../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry, ParkedItemMetrics } from '../../src/telemetry/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced, orderStatusChanged, paymentReceived } from '../support/orderMessages.js';
import { RecordingLog } from '../support/recordingLog.js';
import { TestMetricReader } from '../support/testMetricReader.js';

let client: CosmosClient;
let container: Container;
let store: CountingDocumentStore;
let reader: TestMetricReader;
let meter: ReturnType<MeterProvider['getMeter']>;
let consumer: OrderConsumer;
let nowMs = Date.parse('2026-11-30T12:00:00Z');
let sequence = 0;

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  store = new CountingDocumentStore(new CosmosDocumentStore(container));
  reader = new TestMetricReader();
  meter = new MeterProvider({ readers: [reader] }).getMeter('test');
  consumer = new OrderConsumer({
    store,
    now: () => new Date(nowMs),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262144,
    maxConcurrencyAttempts: 10,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(meter), new ParkedItemMetrics(meter)),
  });
});
afterAll(() => client.dispose());

const send = (messageId: string, subject: string, body: unknown, log = new RecordingLog()) =>
  consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount: 1, sequenceNumber: (sequence += 1) }), body, log);

async function parkedItemCount(event: string, reason?: string): Promise<number | undefined> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'orders.parked_items');
  const point = metric?.dataPoints.find((p) => p.attributes.event === event && (reason === undefined || p.attributes.reason === reason));
  return point?.value as number | undefined;
}

describe('parking on Cosmos DB (the stand-in, through the real SDK)', () => {
  it('costs four round trips to park a payment, one for a new order with nothing parked, four for an order with parked items', async () => {
    const orderId = newOrderId();
    store.reset();
    await send(`pay-${orderId}`, 'PaymentReceived', paymentReceived(orderId));
    // Read the order, read its arrival gate (none: nothing parked before claims), claim the paymentId, park.
    expect({ reads: store.reads, commits: store.commits, queries: store.queries }).toEqual({ reads: 2, commits: 2, queries: 0 });
    store.reset();
    await send(`st-${orderId}`, 'OrderStatusChanged', orderStatusChanged(orderId, 1, 'Paid'));
    // The gate is open already: a 409 on it, a read of it, and the batch that joins it.
    expect(store.trips).toBe(4);
    store.reset();
    const placed = await send(`m-${orderId}`, 'OrderPlaced', orderPlaced(orderId));
    expect(placed.outcome).toMatchObject({ kind: 'created', appliedParked: 2 });
    expect({ reads: store.reads, commits: store.commits, queries: store.queries }).toEqual({ reads: 1, commits: 2, queries: 1 });
    store.reset();
    await send(`m-${newOrderId()}`, 'OrderPlaced', orderPlaced(newOrderId()));
    expect(store.trips).toBe(1);
  });

  it('counts applied and rejected parked items on orders.parked_items, by reason', async () => {
    const orderId = newOrderId();
    const before = (await parkedItemCount('applied')) ?? 0;
    await send(`ok-${orderId}`, 'PaymentReceived', paymentReceived(orderId));
    await send(`usd-${orderId}`, 'PaymentReceived', paymentReceived(orderId, { currency: 'USD' }));
    const log = new RecordingLog();
    await send(`m-${orderId}`, 'OrderPlaced', orderPlaced(orderId), log);
    expect((await parkedItemCount('applied')) ?? 0).toBe(before + 1);
    expect(await parkedItemCount('rejected', 'CurrencyMismatch')).toBeGreaterThanOrEqual(1);
    expect(log.lines.find((l) => l.level === 'error')?.record).toMatchObject({
      event: 'parked-item',
      outcome: 'rejected',
      reason: 'CurrencyMismatch',
      orderId,
      messageId: `usd-${orderId}`,
    });
  });

  it('runs the sweeper from settings: one line per run, an error line and a count per OrderNeverArrived', async () => {
    const orderId = newOrderId();
    await send(`lost-${orderId}`, 'PaymentReceived', paymentReceived(orderId));
    const settings = loadSettings({ ...process.env, PARKED_ITEM_HORIZON_SECONDS: '600', PARKED_SWEEP_MIN_AGE_SECONDS: '60' });
    const sweeper = createParkedItemSweeper(settings, { store, now: () => new Date(nowMs), meter });
    const early = new RecordingLog();
    await sweeper.sweep(early);
    expect(early.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(early.lines.find((l) => l.record.event === 'parked-sweep')?.record.oldestParkedAgeSeconds).toBeGreaterThanOrEqual(0);
    nowMs += 601_000;
    const log = new RecordingLog();
    const result = await sweeper.sweep(log);
    expect(result.rejected.map((r) => r.orderId)).toContain(orderId);
    expect(log.lines.find((l) => l.level === 'error' && l.record.orderId === orderId)?.record).toMatchObject({
      event: 'parked-item',
      outcome: 'rejected',
      source: 'sweep',
      reason: 'OrderNeverArrived',
    });
    expect(log.lines.find((l) => l.record.event === 'parked-sweep')?.record).toMatchObject({ horizonSeconds: 600, rejected: result.rejected.length });
    expect(await parkedItemCount('rejected', 'OrderNeverArrived')).toBeGreaterThanOrEqual(1);
    const { resourceMetrics } = await reader.collect();
    const ages = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'orders.parked_items.oldest_age');
    expect(ages?.descriptor.unit).toBe('s');
    expect((ages?.dataPoints[0]?.value as { count?: number } | undefined)?.count).toBeGreaterThanOrEqual(2);
  });
});
