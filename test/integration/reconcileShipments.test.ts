import type { Container, CosmosClient } from '@azure/cosmos';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { loadSettings } from '../../src/config.js';
import type { DocumentStore } from '../../src/idempotency/index.js';
import { HttpCarrierClient, createShipmentReconciler, parseShipmentEvent, shipmentRecordId } from '../../src/shipments/index.js';
import type { CarrierClient, ShipmentRecord } from '../../src/shipments/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { RecordingLog } from '../support/recordingLog.js';
import {
  GatedCarrier,
  ProcessKilled,
  ScriptedStore,
  TestClock,
  cosmosStore,
  httpCarrier,
  orderOf,
  redelivered,
  shipmentConsumer,
  storedOrderWithEvent,
} from '../support/shipmentHarness.js';
import type { EventDelivery } from '../support/shipmentHarness.js';
import { TestMetricReader } from '../support/testMetricReader.js';

// The reconciler over the Cosmos stand-in and the carrier stand-in, one container per test so that
// its cross-partition query sees only that test's records.
let client: CosmosClient;
let carrier: CarrierStandIn;
let container: Container;
let store: DocumentStore;
let reader: TestMetricReader;
let meter: ReturnType<MeterProvider['getMeter']>;
let clock: TestClock;
const leaseMs = 60_000;

beforeAll(async () => {
  client = testCosmosClient();
  carrier = await startCarrierStandIn();
});

beforeEach(async () => {
  container = await createOrdersContainer(client);
  store = cosmosStore(container);
  reader = new TestMetricReader();
  meter = new MeterProvider({ readers: [reader] }).getMeter('test');
  // Now, not a fixed date: the dead-letter tool judges leases by the machine's clock.
  clock = new TestClock(Date.now());
});

afterEach(async () => {
  carrier.clearFaults();
  await container.delete();
});

afterAll(async () => {
  client.dispose();
  await carrier.close();
});

function reconciler(options: { carrier?: CarrierClient; maxAttempts?: number; batchSize?: number; budgetSeconds?: number } = {}) {
  const settings = loadSettings({
    ...process.env,
    CARRIER_API_URL: carrier.url,
    SHIPMENT_RECONCILE_MAX_ATTEMPTS: String(options.maxAttempts ?? 3),
    ...(options.budgetSeconds === undefined ? {} : { TRANSIENT_RETRY_BUDGET_SECONDS: String(options.budgetSeconds) }),
    SHIPMENT_RECONCILE_BATCH_SIZE: String(options.batchSize ?? 50),
  });
  return createShipmentReconciler(settings, { store, carrier: options.carrier ?? httpCarrier(carrier), now: clock.now, meter });
}

/** A consumer that dies at the given point, leaving its record in progress under its lease. */
async function abandoned(where: 'before-call' | 'after-answer'): Promise<EventDelivery> {
  const delivery = await storedOrderWithEvent(store, clock.now());
  const dying = new ScriptedStore(store);
  const gated = new GatedCarrier(httpCarrier(carrier));
  if (where === 'before-call') {
    gated.killBeforeBook = true;
    gated.onKill = () => dying.kill();
  } else dying.killBeforeCommitOf = 'completed';
  const result = await shipmentConsumer({ store: dying, carrier: gated, now: clock.now, leaseMs }).consume(
    delivery.envelope,
    delivery.body,
    new RecordingLog(),
    { invocationId: 'dead' },
  );
  expect(result.outcome).toMatchObject({ kind: 'retry', cause: expect.any(ProcessKilled) });
  return delivery;
}

async function recordOf(delivery: EventDelivery): Promise<ShipmentRecord | undefined> {
  const key = parseShipmentEvent(delivery.envelope, delivery.body, 1 << 20).key;
  return (await store.read<ShipmentRecord>(delivery.orderId, shipmentRecordId(key)))?.document;
}

async function counter(name: string, result?: string): Promise<number | undefined> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return metric?.dataPoints.find((p) => result === undefined || p.attributes.result === result)?.value as number | undefined;
}

function bookingsFor(orderId: string) {
  return carrier.bookings().filter((b) => b.orderReference === orderId);
}

describe('reconcileShipments', () => {
  it('leaves records whose lease is live alone: their owner may still be calling', async () => {
    await abandoned('before-call');
    const log = new RecordingLog();
    expect(await reconciler().reconcile(log)).toEqual({ examined: 0, items: [] });
    expect(log.lines.at(-1)?.record).toEqual({ event: 'shipment-reconcile', examined: 0 });
  });

  it('an owner that died before calling: the look-up finds nothing, so the reconciler takes the lease over and books under the same key', async () => {
    const delivery = await abandoned('before-call');
    expect(bookingsFor(delivery.orderId)).toHaveLength(0);
    clock.advance(leaseMs + 1);
    const log = new RecordingLog();
    const run = await reconciler().reconcile(log, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(run.items).toEqual([expect.objectContaining({ orderId: delivery.orderId, result: 'completed' })]);
    const [booking] = bookingsFor(delivery.orderId);
    expect(bookingsFor(delivery.orderId)).toHaveLength(1);
    expect(booking?.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe(booking?.shipmentId);
    expect(await recordOf(delivery)).toMatchObject({
      state: 'completed',
      attempt: 2,
      owner: expect.stringMatching(/^reconciler\//),
      answer: { via: 'booking' },
    });
    expect(log.lines.at(-1)?.record).toEqual({ event: 'shipment-reconcile', examined: 1, completed: 1 });
    expect(await counter('shipments.reconciled', 'completed')).toBe(1);

    // The event's next delivery finds the booking recorded.
    const again = await shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      redelivered(delivery, 2).envelope,
      delivery.body,
      new RecordingLog(),
      { invocationId: 'late' },
    );
    expect(again).toMatchObject({ outcome: { kind: 'duplicate' }, shipmentId: booking?.shipmentId });
    expect(bookingsFor(delivery.orderId)).toHaveLength(1);
  });

  it('an owner that died after the carrier booked: the look-up finds the booking and nothing is called', async () => {
    const delivery = await abandoned('after-answer');
    clock.advance(leaseMs + 1);
    const requests = carrier.stats().requests;
    const run = await reconciler().reconcile(new RecordingLog());
    expect(run.items).toEqual([expect.objectContaining({ result: 'completed', shipmentId: bookingsFor(delivery.orderId)[0]?.shipmentId })]);
    expect(carrier.stats().requests).toBe(requests);
    expect(await recordOf(delivery)).toMatchObject({ state: 'completed', attempt: 1, answer: { via: 'lookup' } });
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe(bookingsFor(delivery.orderId)[0]?.shipmentId);
  });

  it('escalates a record whose carrier stays unreachable past the transient retry budget: an error line, a counter, and the event then bound for the operator', async () => {
    const delivery = await abandoned('before-call');
    const unreachable = new HttpCarrierClient({ baseUrl: 'http://127.0.0.1:9/', timeoutMs: 1000, now: clock.now });
    const log = new RecordingLog();
    clock.advance(leaseMs + 1);
    const first = await reconciler({ carrier: unreachable, maxAttempts: 1, budgetSeconds: 3600 }).reconcile(log);
    expect(first.items).toEqual([expect.objectContaining({ result: 'still-in-progress', reason: expect.stringContaining('the connection failed') })]);
    expect(await recordOf(delivery)).toMatchObject({
      state: 'in-progress',
      reconcileAttempts: 0,
      carrierUnreachableSince: clock.now().toISOString(),
      lastError: expect.stringContaining('the connection failed'),
    });
    clock.advance(3600_000);
    const second = await reconciler({ carrier: unreachable, maxAttempts: 1, budgetSeconds: 3600 }).reconcile(log);
    expect(second.items).toEqual([expect.objectContaining({ result: 'escalated' })]);
    expect(await recordOf(delivery)).toMatchObject({
      state: 'escalated',
      reconcileAttempts: 0,
      escalation: { reason: expect.stringContaining('the carrier gave no answer for 3600 s') },
    });
    const errorLine = log.lines.find((l) => l.level === 'error');
    expect(errorLine?.record).toMatchObject({ event: 'shipment', outcome: 'escalated', orderId: delivery.orderId });
    expect(await counter('shipments.escalations')).toBe(1);

    const next = await shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      redelivered(delivery, 2).envelope,
      delivery.body,
      new RecordingLog(),
      { invocationId: 'later' },
    );
    expect(next.outcome).toMatchObject({
      kind: 'invalid',
      error: { code: 'ShipmentEscalated', description: expect.stringContaining(`npm run dlq -- shipments resolve ${delivery.orderId}`) },
    });
    expect(bookingsFor(delivery.orderId)).toHaveLength(0);
    // Escalated records are not the reconciler's any more.
    clock.advance(leaseMs + 1);
    expect((await reconciler({ carrier: unreachable, budgetSeconds: 3600 }).reconcile(new RecordingLog())).examined).toBe(0);
  });

  it('examines at most a batch per run, and the rest on the next run', async () => {
    const deliveries = [await abandoned('before-call'), await abandoned('before-call'), await abandoned('before-call')];
    clock.advance(leaseMs + 1);
    expect((await reconciler({ batchSize: 2 }).reconcile(new RecordingLog())).examined).toBe(2);
    expect((await reconciler({ batchSize: 2 }).reconcile(new RecordingLog())).examined).toBe(1);
    expect((await reconciler({ batchSize: 2 }).reconcile(new RecordingLog())).examined).toBe(0);
    for (const d of deliveries) expect(bookingsFor(d.orderId)).toHaveLength(1);
  });
});

async function dlq(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const env = {
    COSMOS_ENDPOINT: process.env.COSMOS_ENDPOINT,
    COSMOS_KEY: process.env.COSMOS_KEY,
    COSMOS_DATABASE: container.database.id,
    COSMOS_ORDERS_CONTAINER: container.id,
  };
  const code = await runDlqCli(args, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function escalated(): Promise<EventDelivery> {
  const delivery = await abandoned('before-call');
  const unreachable = new HttpCarrierClient({ baseUrl: 'http://127.0.0.1:9/', timeoutMs: 1000, now: clock.now });
  clock.advance(leaseMs + 1);
  await reconciler({ carrier: unreachable, budgetSeconds: 0 }).reconcile(new RecordingLog());
  expect(await recordOf(delivery)).toMatchObject({ state: 'escalated' });
  return delivery;
}

describe('npm run dlq -- shipments', () => {
  it('lists escalated records with their reason, and resolves one with the shipment id the operator found (dry run first)', async () => {
    const delivery = await escalated();
    const listed = await dlq('shipments', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      records: [
        expect.objectContaining({
          orderId: delivery.orderId,
          state: 'escalated',
          reconcileAttempts: 0,
          reason: expect.stringContaining('the transient retry budget (TRANSIENT_RETRY_BUDGET_SECONDS)'),
        }),
      ],
      truncated: [],
    });
    expect((await dlq('shipments', 'list')).stdout).toMatch(/1 shipment record\(s\)$/);

    const dry = await dlq('shipments', 'resolve', delivery.orderId, '--shipment-id', 'SHP-BYHAND', '--dry-run');
    expect(dry).toMatchObject({ code: 0, stdout: expect.stringContaining('would-record  SHP-BYHAND on the record and the order') });
    expect(await recordOf(delivery)).toMatchObject({ state: 'escalated' });

    const done = await dlq('shipments', 'resolve', delivery.orderId, '--shipment-id', 'SHP-BYHAND');
    expect(done).toMatchObject({ code: 0, stdout: expect.stringContaining('recorded') });
    expect(await recordOf(delivery)).toMatchObject({ state: 'completed', shipmentId: 'SHP-BYHAND', answer: { via: 'operator' } });
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe('SHP-BYHAND');
    expect(bookingsFor(delivery.orderId)).toHaveLength(0);
    // Settled now: a second resolution is refused, and the event's next delivery is a duplicate.
    expect(await dlq('shipments', 'resolve', delivery.orderId, '--retry')).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('refused  no escalated or in-progress shipment record'),
    });
    const next = await shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      redelivered(delivery, 3).envelope,
      delivery.body,
      new RecordingLog(),
      { invocationId: 'x' },
    );
    expect(next).toMatchObject({ outcome: { kind: 'duplicate' }, shipmentId: 'SHP-BYHAND' });
  });

  it('--retry hands an escalated record back to the reconciler, which books it once the carrier answers', async () => {
    const delivery = await escalated();
    expect(await dlq('shipments', 'resolve', delivery.orderId, '--retry')).toMatchObject({ code: 0, stdout: expect.stringContaining('requeued') });
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', reconcileAttempts: 0, owner: 'operator' });
    expect(await recordOf(delivery)).not.toHaveProperty('carrierUnreachableSince');
    const run = await reconciler().reconcile(new RecordingLog());
    expect(run.items).toEqual([expect.objectContaining({ result: 'completed' })]);
    expect(bookingsFor(delivery.orderId)).toHaveLength(1);
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe(bookingsFor(delivery.orderId)[0]?.shipmentId);
  });

  it('a carrier that keeps its 503 under the key is no refusal: the record stays in progress, the event is retried, and resolve can still act on it', async () => {
    const keeping = await startCarrierStandIn({ keepErrorAnswers: true });
    try {
      keeping.inject({ kind: 'unavailable' });
      const delivery = await storedOrderWithEvent(store, clock.now());
      const consumer = shipmentConsumer({ store, carrier: httpCarrier(keeping), now: clock.now, leaseMs });
      expect((await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), { invocationId: 'first' })).outcome.kind).toBe('retry');
      clock.advance(1);
      const run = await reconciler({ carrier: httpCarrier(keeping) }).reconcile(new RecordingLog());
      expect(run.items).toEqual([
        expect.objectContaining({ result: 'still-in-progress', reason: expect.stringContaining('keeps a 503 answer under this key') }),
      ]);
      expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress' });
      const again = await consumer.consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), { invocationId: 'second' });
      expect(again.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('keeps a 503 answer under this key') });

      expect(await dlq('shipments', 'resolve', delivery.orderId, '--retry', '--dry-run')).toMatchObject({
        code: 0,
        stdout: expect.stringContaining('would-requeue'),
      });
      expect(await dlq('shipments', 'resolve', delivery.orderId, '--shipment-id', 'SHP-BYHAND')).toMatchObject({
        code: 0,
        stdout: expect.stringContaining('recorded'),
      });
      expect(await recordOf(delivery)).toMatchObject({ state: 'completed', shipmentId: 'SHP-BYHAND' });
      expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe('SHP-BYHAND');
      expect(keeping.bookings()).toHaveLength(0);
    } finally {
      await keeping.close();
    }
  });

  it('refuses a record someone holds, and a resolution that names neither or both actions', async () => {
    const delivery = await abandoned('before-call'); // its lease is live
    expect(await dlq('shipments', 'resolve', delivery.orderId, '--retry')).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('fulfilment/dead holds it until'),
    });
    expect(await dlq('shipments', 'resolve', delivery.orderId)).toMatchObject({ code: 2, stderr: 'error: give exactly one of --shipment-id <id> or --retry' });
    expect(await dlq('shipments', 'resolve', delivery.orderId, '--retry', '--shipment-id', 'X')).toMatchObject({ code: 2 });
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', owner: 'fulfilment/dead' });
  });
});
