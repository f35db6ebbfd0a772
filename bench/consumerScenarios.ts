// The consumer paths the bench times and prices, each as "prepare n messages, then deliver message i":
// one definition, so the timed bench and the cost table's test (test/docs/capacityTable.test.ts) run
// the same store work.
import { randomUUID } from 'node:crypto';
import { metrics } from '@opentelemetry/api';
import type { DocumentStore } from '../src/idempotency/index.js';
import { OrderConsumer } from '../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../src/telemetry/index.js';

export const concurrency = 16;
const silent = { info() {}, warn() {}, error() {} };

export type Deliver = (i: number) => Promise<unknown>;
export interface ConsumerScenario {
  readonly name: string;
  prepare(n: number): Promise<Deliver>;
}
export type Consume = (messageId: string, subject: string, body: unknown, deliveryCount?: number, sequenceNumber?: number) => Promise<unknown>;

export const order = (orderId: string, customerId = 'c') => ({
  orderId,
  customerId,
  currency: 'EUR',
  lines: [{ sku: 's', quantity: 1, unitPrice: 10 }],
  placedAt: '2026-11-30T08:00:00Z',
});
/** One payment per order: a payment is claimed by its paymentId, so a shared one would make every other a conflict. */
export const payment = (orderId: string) => ({ orderId, paymentId: `pay-${orderId}`, amount: 1, currency: 'EUR', receivedAt: '2026-11-30T08:00:00Z' });
export type NewIds = (n: number) => string[];
/** Fixed-length ids, so every run stores documents of about the same sizes. */
export const ids: NewIds = (n) => Array.from({ length: n }, () => `b-${randomUUID()}`);
/**
 * The same ids on every run, shaped like `ids`: an invalid message's rejection lives in a partition
 * named from its MessageId (`#rejected-0` to `#rejected-15`), so with random ids a path's mean size
 * moves by a byte from run to run; the table the docs quote must not.
 */
export function sequentialIds(): NewIds {
  let next = 0;
  return (n) => Array.from({ length: n }, () => `b-00000000-0000-4000-8000-${String((next += 1)).padStart(12, '0')}`);
}

export function createBenchConsumer(store: DocumentStore): Consume {
  const consumer = new OrderConsumer({
    store,
    now: () => new Date(),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 10,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('bench'))),
  });
  return (messageId, subject, body, deliveryCount = 1, sequenceNumber = 1) =>
    consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber }), body, silent);
}

/** n new orders, placed through the consumer. */
export function placeOrders(consume: Consume, newIds: NewIds = ids): (n: number) => Promise<string[]> {
  return async (n) => {
    const o = newIds(n);
    await runAll(n, (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!)));
    return o;
  };
}

export function consumerScenarios(consume: Consume, newIds: NewIds = ids): ConsumerScenario[] {
  const preparedOrders = placeOrders(consume, newIds);
  return [
    {
      name: 'OrderPlaced, new',
      prepare: async (n) => {
        const o = newIds(n);
        return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!));
      },
    },
    {
      name: 'OrderPlaced, duplicate (redelivered)',
      prepare: async (n) => {
        const o = await preparedOrders(n);
        return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!), 2);
      },
    },
    {
      name: 'PaymentReceived, new',
      prepare: async (n) => {
        const o = await preparedOrders(n);
        return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!));
      },
    },
    {
      name: 'PaymentReceived, duplicate (redelivered)',
      prepare: async (n) => {
        const o = await preparedOrders(n);
        await runAll(n, (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!)));
        return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!), 2);
      },
    },
    {
      name: 'PaymentReceived, early (parked)',
      prepare: async (n) => {
        const o = newIds(n);
        return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!));
      },
    },
    {
      name: 'OrderPlaced, one payment parked',
      prepare: async (n) => {
        const o = newIds(n);
        await runAll(n, (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!)));
        return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!));
      },
    },
    {
      name: 'conflict, first delivery',
      prepare: async (n) => {
        const o = await preparedOrders(n);
        return (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 1, 7);
      },
    },
    {
      name: 'conflict, each redelivery',
      prepare: async (n) => {
        const o = await preparedOrders(n);
        await runAll(n, (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 1, 7));
        return (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 2, 7);
      },
    },
    {
      name: 'invalid, each redelivery',
      // Each its own broker message (sequence number), redelivered to the instance that rejected it, which remembers it.
      prepare: async (n) => {
        const o = newIds(n);
        await runAll(n, (i) => consume(`bad-${o[i]}`, 'OrderPlaced', '{"orderId":', 1, 1_000 + i));
        return (i) => consume(`bad-${o[i]}`, 'OrderPlaced', '{"orderId":', 2, 1_000 + i);
      },
    },
  ];
}

/** Runs `run(0..n-1)` with `concurrency` in flight. */
export async function runAll(n: number, run: Deliver): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await run(next++);
    }),
  );
}
