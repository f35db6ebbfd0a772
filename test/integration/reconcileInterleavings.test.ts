import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import { loadSettings } from '../../src/config.js';
import type { DocumentStore } from '../../src/idempotency/index.js';
import { HttpCarrierClient, createShipmentReconciler, parseShipmentEvent, shipmentRecordId } from '../../src/shipments/index.js';
import type { CarrierClient, LookupAnswer, ShipmentRecord } from '../../src/shipments/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { RecordingLog } from '../support/recordingLog.js';
import {
  Gate,
  GatedCarrier,
  TestClock,
  cosmosStore,
  httpCarrier,
  orderOf,
  redelivered,
  shipmentConsumer,
  storedOrderWithEvent,
} from '../support/shipmentHarness.js';
import type { EventDelivery } from '../support/shipmentHarness.js';
import { eventually } from '../support/waiting.js';

// The reconciler against owners that come back (a delayed copy of the event) and against a carrier
// that cannot be reached: schedules set with gates, a held carrier request and a test clock.
let client: CosmosClient;
let carrier: CarrierStandIn;
let container: Container;
let store: DocumentStore;
let clock: TestClock;
const leaseMs = 60_000;
const twoMinutes = 120_000;

beforeAll(async () => {
  client = testCosmosClient();
  carrier = await startCarrierStandIn();
});

beforeEach(async () => {
  container = await createOrdersContainer(client);
  store = cosmosStore(container);
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

/** The reconciler with the shipped defaults, unless a test names a setting. */
function reconciler(reaching: CarrierClient, env: Record<string, string> = {}) {
  const settings = loadSettings({ ...process.env, CARRIER_API_URL: carrier.url, ...env });
  return createShipmentReconciler(settings, { store, carrier: reaching, now: clock.now });
}

const unreachable = (): HttpCarrierClient => new HttpCarrierClient({ baseUrl: 'http://127.0.0.1:9/', timeoutMs: 1000, now: clock.now });

/** A carrier still handling some earlier request under every key: its look-up says in flight. */
function stuckCarrier(): CarrierClient {
  const inner = httpCarrier(carrier);
  return { book: (request) => inner.book(request), lookup: async (): Promise<LookupAnswer> => ({ kind: 'in-flight' }) };
}

const consumer = (reaching: CarrierClient = httpCarrier(carrier)) => shipmentConsumer({ store, carrier: reaching, now: clock.now, leaseMs });

/** A consumer whose carrier call failed: it handed the event back and ended its lease. */
async function handedBack(reaching: CarrierClient): Promise<EventDelivery> {
  const delivery = await storedOrderWithEvent(store, clock.now());
  const result = await consumer(reaching).consume(delivery.envelope, delivery.body, new RecordingLog(), { invocationId: 'first' });
  expect(result.outcome.kind).toBe('retry');
  return delivery;
}

async function recordOf(delivery: EventDelivery): Promise<ShipmentRecord | undefined> {
  const key = parseShipmentEvent(delivery.envelope, delivery.body, 1 << 20).key;
  return (await store.read<ShipmentRecord>(delivery.orderId, shipmentRecordId(key)))?.document;
}

const bookingsFor = (orderId: string) => carrier.bookings().filter((b) => b.orderReference === orderId);

describe('the reconciler and an owner that takes the record over', () => {
  it('a delayed copy takes the lease over while the reconciler works from a stale read: no round is counted, and the booking lands on the order', async () => {
    // One round already counted against the record (the carrier said "in flight"), one left before escalation.
    const delivery = await handedBack(unreachable());
    clock.advance(1);
    expect((await reconciler(stuckCarrier(), { SHIPMENT_RECONCILE_MAX_ATTEMPTS: '2' }).reconcile(new RecordingLog())).items).toEqual([
      expect.objectContaining({ result: 'still-in-progress' }),
    ]);
    expect(await recordOf(delivery)).toMatchObject({ reconcileAttempts: 1 });

    // The reconciler's query returns the record (lease expired); its look-up waits.
    const lookupGate = new Gate();
    const gated = new GatedCarrier(httpCarrier(carrier));
    gated.beforeLookup = lookupGate;
    clock.advance(twoMinutes);
    const run = reconciler(gated, { SHIPMENT_RECONCILE_MAX_ATTEMPTS: '2' }).reconcile(new RecordingLog());
    await lookupGate.reached();

    // A delayed copy (owner B) takes the lease over and calls the carrier, which holds its request in flight.
    let answerB!: () => void;
    carrier.inject({ kind: 'hold', until: new Promise<void>((resolve) => (answerB = resolve)) });
    const faults = carrier.stats().faultsInjected;
    const copy = consumer().consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), { invocationId: 'delayed-copy' });
    await eventually("B's booking is in flight at the carrier", () => carrier.stats().faultsInjected > faults);
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', owner: 'fulfilment/delayed-copy', attempt: 2 });

    // The reconciler's look-up now says in flight; the record is B's, so the round is not the reconciler's to count.
    lookupGate.open();
    expect((await run).items).toEqual([expect.objectContaining({ orderId: delivery.orderId, result: 'taken-by-another' })]);
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', owner: 'fulfilment/delayed-copy' });

    answerB();
    const result = await copy;
    const booked = bookingsFor(delivery.orderId);
    expect(booked).toHaveLength(1);
    expect(result).toMatchObject({ outcome: { kind: 'created' }, shipmentId: booked[0]?.shipmentId });
    expect(await recordOf(delivery)).toMatchObject({ state: 'completed', shipmentId: booked[0]?.shipmentId });
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe(booked[0]?.shipmentId);
  });

  it('a takeover starts the rounds again: rounds counted against the previous owner do not escalate the new one', async () => {
    const delivery = await handedBack(unreachable());
    clock.advance(1);
    await reconciler(stuckCarrier(), { SHIPMENT_RECONCILE_MAX_ATTEMPTS: '2' }).reconcile(new RecordingLog());
    expect(await recordOf(delivery)).toMatchObject({ reconcileAttempts: 1 });

    // A redelivery takes the expired lease over, is answered 503, and hands the event back.
    carrier.inject({ kind: 'unavailable' });
    const retried = await consumer().consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), { invocationId: 'second' });
    expect(retried.outcome.kind).toBe('retry');
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', owner: 'fulfilment/second', attempt: 2, reconcileAttempts: 0 });

    clock.advance(1);
    expect((await reconciler(stuckCarrier(), { SHIPMENT_RECONCILE_MAX_ATTEMPTS: '2' }).reconcile(new RecordingLog())).items).toEqual([
      expect.objectContaining({ result: 'still-in-progress' }),
    ]);
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', reconcileAttempts: 1 });
  });
});

describe('the reconciler during a carrier outage', () => {
  it('a 10-minute outage with the default settings escalates nothing, and the booking completes once the carrier is back', async () => {
    const delivery = await handedBack(unreachable());
    for (let minute = 2; minute <= 10; minute += 2) {
      clock.advance(twoMinutes);
      const run = await reconciler(unreachable()).reconcile(new RecordingLog());
      expect(run.items, `the run at minute ${minute}`).toEqual([expect.objectContaining({ orderId: delivery.orderId, result: 'still-in-progress' })]);
    }
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress' });

    clock.advance(twoMinutes);
    const back = await reconciler(httpCarrier(carrier)).reconcile(new RecordingLog());
    expect(back.items).toEqual([expect.objectContaining({ result: 'completed' })]);
    const booked = bookingsFor(delivery.orderId);
    expect(booked).toHaveLength(1);
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe(booked[0]?.shipmentId);
    const next = await consumer().consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), { invocationId: 'later' });
    expect(next).toMatchObject({ outcome: { kind: 'duplicate' }, shipmentId: booked[0]?.shipmentId });
  });
});
