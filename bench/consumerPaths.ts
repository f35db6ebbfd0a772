// npm run bench: what each consumer path costs, measured side by side in one run: its store round
// trips per message (counted), its rate, and the rate of a bare SDK loop doing the same store work
// (the floor: what any consumer of this design pays). Everything runs in this process (the Cosmos
// stand-in included), so absolute rates say little about Azure; the ratios are what this is for.
import { randomUUID } from 'node:crypto';
import { metrics } from '@opentelemetry/api';
import { startCosmosStandIn } from '../dev/cosmos/cosmosStandIn.js';
import { CountingDocumentStore } from '../dev/store/countingDocumentStore.js';
import type { Container, OperationInput } from '@azure/cosmos';
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
  prepare(n: number): Promise<(i: number) => Promise<unknown>>;
  /** The same store work straight through the SDK, on documents prepared the same way. */
  bare(n: number): Promise<(i: number) => Promise<unknown>>;
}

const creates = (...docs: object[]): OperationInput[] => docs.map((resourceBody) => ({ operationType: 'Create', resourceBody: resourceBody as never }));
async function bareBatch(container: Container, pk: string, ops: OperationInput[]): Promise<number> {
  const response = await container.items.batch(ops, pk);
  return response.result?.[0]?.statusCode ?? response.code ?? 0;
}

async function main(): Promise<void> {
  const standIn = await startCosmosStandIn({ port: 0 });
  const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
  const { database } = await client.databases.createIfNotExists({ id: 'bench' });
  const { container } = await database.containers.createIfNotExists({ id: 'orders', partitionKey: { paths: ['/orderId'] }, defaultTtl: -1 });
  const store = new CountingDocumentStore(new CosmosDocumentStore(container));
  const consumer = new OrderConsumer({
    store,
    now: () => new Date(),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 10,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('bench'))),
  });
  const consume = (messageId: string, subject: string, body: unknown, deliveryCount = 1, sequenceNumber = 1) =>
    consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber }), body, silent);
  const order = (orderId: string, customerId = 'c') => ({ orderId, customerId, currency: 'EUR', lines: [{ sku: 's', quantity: 1, unitPrice: 10 }], placedAt: '2026-11-30T08:00:00Z' });
  // One paymentId per order: payments share their claim by paymentId, so a shared one would make every payment after the first a conflict.
  const payment = (orderId: string) => ({ orderId, paymentId: `p-${orderId}`, amount: 1, currency: 'EUR', receivedAt: '2026-11-30T08:00:00Z' });
  const ids = (n: number) => Array.from({ length: n }, () => `b-${randomUUID()}`);
  const placeAll = async (orderIds: string[]) => runAll(orderIds.length, (i) => consume(`m-${orderIds[i]}`, 'OrderPlaced', order(orderIds[i]!)));

  // The bare loops write documents of the same size and shape, through the same client.
  const orderDoc = (orderId: string) => ({ id: orderId, docType: 'order', ...order(orderId), status: 'Accepted', statusVersion: 0, amountPaid: 0, paymentCount: 0, total: 10, fingerprint: 'f'.repeat(64), dedupKey: `m-${orderId}` });
  const outboxDoc = (orderId: string) => ({ id: `outbox|OrderAccepted|${orderId}`, orderId, docType: 'outbox', payload: order(orderId), publishedAt: null });
  const gateDoc = (orderId: string, state: string) => ({ id: `parking-lot|${orderId}`, orderId, docType: 'parking-lot', state, changedAt: '2026-11-30T08:00:00Z' });
  const parkedDoc = (orderId: string) => ({ id: `parked|payment|bare-${orderId}`, orderId, docType: 'parked', state: 'parked', payload: payment(orderId), fingerprint: 'f'.repeat(64), parkedAt: '2026-11-30T08:00:00Z' });
  const bareNewOrder = (orderId: string) => bareBatch(container, orderId, creates(orderDoc(orderId), outboxDoc(orderId), gateDoc(orderId, 'closed')));
  const barePark = async (orderId: string) => {
    await container.item(orderId, orderId).read();
    return bareBatch(container, orderId, creates(parkedDoc(orderId), gateDoc(orderId, 'open')));
  };
  // The order's batch fails on the open gate; the gate and the parked items are read; one batch applies them.
  const bareOrderOverParked = async (orderId: string) => {
    await bareBatch(container, orderId, creates(orderDoc(orderId), outboxDoc(orderId), gateDoc(orderId, 'closed')));
    const gate = await container.item(`parking-lot|${orderId}`, orderId).read();
    const { resources } = await container.items.query<{ id: string; _etag: string }>({ query: "SELECT * FROM c WHERE c.docType = 'parked' AND c.state = 'parked'" }, { partitionKey: orderId }).fetchAll();
    return bareBatch(container, orderId, [
      ...creates({ ...orderDoc(orderId), amountPaid: 1, paymentCount: 1 }, outboxDoc(orderId)),
      { operationType: 'Replace', id: `parking-lot|${orderId}`, resourceBody: gateDoc(orderId, 'closed'), ifMatch: gate.etag },
      ...creates({ id: `inbox|bare-${orderId}`, orderId, docType: 'inbox', fingerprint: 'f'.repeat(64), ttl: 3600 }),
      ...resources.map((r): OperationInput => ({ operationType: 'Replace', id: r.id, resourceBody: { ...parkedDoc(orderId), state: 'applied', ttl: 3600 }, ifMatch: r._etag })),
    ]);
  };
  // A redelivery reads first: one point read finds the order (or the payment's inbox marker).
  const bareRedeliveredDuplicate = (orderId: string, id = orderId) => container.item(id, orderId).read();
  const barePayment = async (orderId: string, markerId: string) => {
    const { resource, etag } = await container.item(orderId, orderId).read();
    return bareBatch(container, orderId, [
      ...creates({ id: markerId, orderId, docType: 'inbox', fingerprint: 'f'.repeat(64), ttl: 3600 }),
      { operationType: 'Replace', id: orderId, resourceBody: { ...resource, amountPaid: 1 }, ifMatch: etag },
    ]);
  };
  const bareConflict = async (orderId: string) => {
    await bareBatch(container, orderId, creates(orderDoc(orderId), outboxDoc(orderId)));
    await container.item(orderId, orderId).read();
    return bareBatch(container, orderId, creates({ id: `conflict|x-${orderId}`, orderId, docType: 'conflict' }, { id: `rejection|x-${orderId}`, orderId, docType: 'rejection', ttl: 3600 }));
  };
  // A redelivery reads first, finds the other order, and its record batch meets its first delivery's (409).
  const bareConflictRedelivered = async (orderId: string) => {
    await container.item(orderId, orderId).read();
    return bareBatch(container, orderId, creates({ id: `conflict|x-${orderId}`, orderId, docType: 'conflict' }, { id: `rejection|x-${orderId}`, orderId, docType: 'rejection', ttl: 3600 }));
  };
  const preparedOrders = async (n: number) => {
    const o = ids(n);
    await placeAll(o);
    return o;
  };

  const paths: Path[] = [
    {
      name: 'OrderPlaced, new',
      prepare: async (n) => { const o = ids(n); return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!)); },
      bare: async (n) => { const o = ids(n); return (i) => bareNewOrder(o[i]!); },
    },
    {
      name: 'OrderPlaced, duplicate (redelivered)',
      prepare: async (n) => { const o = await preparedOrders(n); return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!), 2); },
      bare: async (n) => { const o = await preparedOrders(n); return (i) => bareRedeliveredDuplicate(o[i]!); },
    },
    {
      name: 'PaymentReceived, new',
      prepare: async (n) => { const o = await preparedOrders(n); return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!)); },
      bare: async (n) => { const o = await preparedOrders(n); return (i) => barePayment(o[i]!, `inbox|bare-${o[i]}`); },
    },
    {
      name: 'PaymentReceived, duplicate (redelivered)',
      prepare: async (n) => { const o = await preparedOrders(n); await runAll(n, (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!))); return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!), 2); },
      bare: async (n) => { const o = await preparedOrders(n); await runAll(n, (i) => barePayment(o[i]!, `inbox|bare-${o[i]}`)); return (i) => bareRedeliveredDuplicate(o[i]!, `inbox|bare-${o[i]}`); },
    },
    {
      name: 'PaymentReceived, early (parked)',
      prepare: async (n) => { const o = ids(n); return (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!)); },
      bare: async (n) => { const o = ids(n); return (i) => barePark(o[i]!); },
    },
    {
      name: 'OrderPlaced, one payment parked',
      prepare: async (n) => { const o = ids(n); await runAll(n, (i) => consume(`p-${o[i]}`, 'PaymentReceived', payment(o[i]!))); return (i) => consume(`m-${o[i]}`, 'OrderPlaced', order(o[i]!)); },
      bare: async (n) => { const o = ids(n); await runAll(n, (i) => barePark(o[i]!)); return (i) => bareOrderOverParked(o[i]!); },
    },
    {
      name: 'conflict, first delivery',
      prepare: async (n) => { const o = await preparedOrders(n); return (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 1, 7); },
      bare: async (n) => { const o = await preparedOrders(n); return (i) => bareConflict(o[i]!); },
    },
    {
      name: 'conflict, each redelivery',
      prepare: async (n) => { const o = await preparedOrders(n); await runAll(n, (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 1, 7)); return (i) => consume(`x-${o[i]}`, 'OrderPlaced', order(o[i]!, 'other'), 2, 7); },
      bare: async (n) => { const o = await preparedOrders(n); await runAll(n, (i) => bareConflict(o[i]!)); return (i) => bareConflictRedelivered(o[i]!); },
    },
    {
      name: 'invalid, each redelivery',
      prepare: async (n) => { const o = ids(n); await runAll(n, (i) => consume(`bad-${o[i]}`, 'OrderPlaced', '{"orderId":', 1, 9)); return (i) => consume(`bad-${o[i]}`, 'OrderPlaced', '{"orderId":', 2, 9); },
      bare: async (n) => {
        const o = ids(n);
        const create = (i: number) => container.items.create({ id: `rejection|bad-${o[i]}`, orderId: '#rejected', docType: 'rejection', ttl: 3600 }).catch(() => undefined);
        await runAll(n, create);
        return create;
      },
    },
  ];

  const rates = new Map<string, { project: number[]; bare: number[]; trips: number }>(paths.map((p) => [p.name, { project: [], bare: [], trips: 0 }]));
  const timed = async (n: number, run: (i: number) => Promise<unknown>) => {
    const startedAt = performance.now();
    await runAll(n, run);
    return n / ((performance.now() - startedAt) / 1000);
  };
  for (let round = 1; round <= rounds; round += 1) {
    for (const path of paths) {
      const entry = rates.get(path.name)!;
      // Which of the pair runs first alternates by round, so neither always meets a colder process.
      const measureProject = async () => {
        const run = await path.prepare(messagesPerRound);
        store.reset();
        entry.project.push(await timed(messagesPerRound, run));
        entry.trips = store.trips / messagesPerRound;
      };
      const measureBare = async () => entry.bare.push(await timed(messagesPerRound, await path.bare(messagesPerRound)));
      if (round % 2 === 1) await measureProject().then(measureBare);
      else await measureBare().then(measureProject);
    }
    process.stderr.write(`round ${round} of ${rounds} done\n`);
  }

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  console.log(`\nConsumer paths, ${messagesPerRound} messages x ${rounds} interleaved rounds, ${concurrency} in flight, Node ${process.version}, one process`);
  console.log(`${'path'.padEnd(42)} ${'round trips'.padStart(11)} ${'msg/s'.padStart(8)} ${'bare SDK msg/s'.padStart(15)} ${'vs bare'.padStart(8)}`);
  for (const path of paths) {
    const entry = rates.get(path.name)!;
    const [project, bare] = [median(entry.project), median(entry.bare)];
    console.log(`${path.name.padEnd(42)} ${entry.trips.toFixed(2).padStart(11)} ${project.toFixed(0).padStart(8)} ${bare.toFixed(0).padStart(15)} ${(project / bare).toFixed(2).padStart(7)}x`);
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
