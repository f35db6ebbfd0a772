// npm run bench: what each consumer path costs, measured side by side in one run. Everything runs in
// this process (the Cosmos stand-in included), so absolute rates say little about Azure; the
// ratios between paths (how many store round trips each makes) are what this is for.
import { randomUUID } from 'node:crypto';
import { metrics } from '@opentelemetry/api';
import { startCosmosStandIn } from '../dev/cosmos/cosmosStandIn.js';
import { CosmosDocumentStore, createCosmosClient } from '../src/cosmos/index.js';
import { OrderConsumer } from '../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../src/telemetry/index.js';

const messagesPerRound = Number(process.env.BENCH_MESSAGES ?? 600);
const rounds = 3;
const concurrency = 16;
const silent = { info() {}, warn() {}, error() {} };

interface Path {
  readonly name: string;
  /** Store calls per message, by design; the run checks the rates against them. */
  readonly requests: string;
  prepare(n: number): Promise<(i: number) => Promise<unknown>>;
}

async function main(): Promise<void> {
  const standIn = await startCosmosStandIn({ port: 0 });
  const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
  const { database } = await client.databases.createIfNotExists({ id: 'bench' });
  const { container } = await database.containers.createIfNotExists({ id: 'orders', partitionKey: { paths: ['/orderId'] }, defaultTtl: -1 });
  const consumer = new OrderConsumer({
    store: new CosmosDocumentStore(container),
    now: () => new Date(),
    markerTtlSeconds: 3600,
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 10,
    orderArrivalWaitMs: 0,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('bench'))),
  });
  const consume = (messageId: string, subject: string, body: unknown, deliveryCount = 1, sequenceNumber = 1) =>
    consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber }), body, silent);
  const order = (orderId: string, customerId = 'c') => ({ orderId, customerId, currency: 'EUR', lines: [{ sku: 's', quantity: 1, unitPrice: 10 }], placedAt: '2026-11-30T08:00:00Z' });
  const payment = (orderId: string) => ({ orderId, paymentId: 'p', amount: 1, currency: 'EUR', receivedAt: '2026-11-30T08:00:00Z' });
  const ids = (n: number) => Array.from({ length: n }, () => `b-${randomUUID()}`);
  const placeAll = async (orderIds: string[]) => runAll(orderIds.length, (i) => consume(`m-${orderIds[i]}`, 'OrderPlaced', order(orderIds[i]!)));

  const paths: Path[] = [
    { name: 'OrderPlaced, new', requests: '1 batch', prepare: async (n) => { const o = ids(n); return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!)); } },
    { name: 'OrderPlaced, duplicate', requests: '1 batch (409) + 1 read', prepare: async (n) => { const o = ids(n); await placeAll(o); return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!), 2); } },
    { name: 'PaymentReceived, new', requests: '1 read + 1 batch', prepare: async (n) => { const o = ids(n); await placeAll(o); return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!)); } },
    { name: 'PaymentReceived, duplicate', requests: '1 read + 1 batch (409) + 1 read', prepare: async (n) => { const o = ids(n); await placeAll(o); await runAll(n, (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!))); return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!), 2); } },
    { name: 'conflict, first delivery', requests: '1 batch (409) + 1 read + 2 creates', prepare: async (n) => { const o = ids(n); await placeAll(o); return (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 1, 7); } },
    { name: 'conflict, each redelivery', requests: '1 read', prepare: async (n) => { const o = ids(n); await placeAll(o); await runAll(n, (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 1, 7)); return (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 2, 7); } },
  ];

  const rates = new Map<string, number[]>(paths.map((p) => [p.name, []]));
  for (let round = 1; round <= rounds; round += 1) {
    for (const path of paths) {
      const run = await path.prepare(messagesPerRound);
      const startedAt = performance.now();
      await runAll(messagesPerRound, run);
      rates.get(path.name)?.push(messagesPerRound / ((performance.now() - startedAt) / 1000));
    }
    process.stderr.write(`round ${round} of ${rounds} done\n`);
  }

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const baseline = median(rates.get(paths[0]!.name) ?? []);
  console.log(`\nConsumer paths, ${messagesPerRound} messages x ${rounds} interleaved rounds, ${concurrency} in flight, Node ${process.version}, one process`);
  console.log(`${'path'.padEnd(30)} ${'store requests'.padEnd(36)} ${'msg/s (median)'.padStart(15)} ${'vs new order'.padStart(13)}`);
  for (const path of paths) {
    const rate = median(rates.get(path.name) ?? []);
    console.log(`${path.name.padEnd(30)} ${path.requests.padEnd(36)} ${rate.toFixed(0).padStart(15)} ${(rate / baseline).toFixed(2).padStart(12)}x`);
  }
  client.dispose();
  await standIn.close();
}

async function runAll(n: number, run: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await run(next++);
  }));
}

void main();
