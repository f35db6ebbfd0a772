import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import { replace } from '../../src/idempotency/index.js';
import type { RetryScheduler, ScheduledCopy } from '../../src/servicebus/index.js';
import type { DocumentStore } from '../../src/idempotency/index.js';
import { rejectedMessagesPartition, rejectionDocumentId } from '../../src/orders/index.js';
import type { OrderDocument, RejectionDocument } from '../../src/orders/index.js';
import { idempotencyKeyHeader, shipmentRecordId } from '../../src/shipments/index.js';
import type { ShipmentRecord } from '../../src/shipments/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { RecordingLog } from '../support/recordingLog.js';
import {
  Gate,
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
import { keyedCopyId } from '../support/signedRetryState.js';
import { eventually } from '../support/waiting.js';

// The two-phase booking against the carrier stand-in over HTTP and the Cosmos stand-in, with the
// consumer driven directly: the clock, the crash points and the interleavings are the test's.
let client: CosmosClient;
let container: Container;
let carrier: CarrierStandIn;
let store: DocumentStore;
const leaseMs = 60_000;
const invocation = (id: string) => ({ invocationId: id, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  store = cosmosStore(container);
  carrier = await startCarrierStandIn();
});

afterEach(() => carrier.clearFaults());

afterAll(async () => {
  await container.delete();
  client.dispose();
  await carrier.close();
});

async function recordOf(delivery: EventDelivery): Promise<ShipmentRecord | undefined> {
  const { key } = await keyOf(delivery);
  return (await store.read<ShipmentRecord>(delivery.orderId, shipmentRecordId(key)))?.document;
}

async function keyOf(delivery: EventDelivery): Promise<{ key: string }> {
  const { parseShipmentEvent } = await import('../../src/shipments/index.js');
  return { key: parseShipmentEvent(delivery.envelope, delivery.body, 1 << 20).key };
}

function bookingsFor(orderId: string) {
  return carrier.bookings().filter((b) => b.orderReference === orderId);
}

/** The end every test reaches: one booking at the carrier, and the order holding its shipment id. */
async function expectBookedOnce(delivery: EventDelivery): Promise<string> {
  const bookings = bookingsFor(delivery.orderId);
  expect(bookings).toHaveLength(1);
  const shipmentId = bookings[0]?.shipmentId;
  expect((await orderOf(store, delivery.orderId))?.shipmentId).toBe(shipmentId);
  const record = await recordOf(delivery);
  expect(record).toMatchObject({ state: 'completed', shipmentId });
  return shipmentId ?? '';
}

describe('requestShipment: one booking per event', () => {
  it('books with the event key as an Idempotency-Key and the invocation trace id, records it with the order, and a redelivery calls nobody', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs });
    const log = new RecordingLog();
    const first = await consumer.consume(delivery.envelope, delivery.body, log, invocation('i-1'));
    expect(first.outcome.kind).toBe('created');
    const shipmentId = await expectBookedOnce(delivery);
    expect(first.shipmentId).toBe(shipmentId);
    const [booking] = bookingsFor(delivery.orderId);
    const { key } = await keyOf(delivery);
    expect(booking?.idempotencyKey).toBe(key);
    expect(booking?.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(booking?.traceparent).not.toContain('b7ad6b7169203331');
    expect(await recordOf(delivery)).toMatchObject({ attempt: 1, answer: { status: 201, via: 'booking' }, owner: 'fulfilment/i-1' });
    expect(log.lines[0]?.record).toMatchObject({ event: 'shipment-message', outcome: 'created', orderId: delivery.orderId, shipmentId, type: 'OrderAccepted' });

    const requestsBefore = carrier.stats().requests;
    const again = await consumer.consume(redelivered(delivery, 2).envelope, delivery.body, log, invocation('i-2'));
    expect(again).toMatchObject({ outcome: { kind: 'duplicate' }, shipmentId });
    expect(carrier.stats().requests).toBe(requestsBefore);
    await expectBookedOnce(delivery);
  });

  it('a booking whose answer was lost (the connection dropped after it booked) is found by a look-up, not booked again', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs });
    carrier.inject({ kind: 'drop-after-booking' });
    const first = await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(first.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('the connection failed') });
    // Handing the event back, the owner ends its lease: the next delivery need not wait it out.
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress', owner: 'fulfilment/i-1', leaseExpiresAt: clock.now().toISOString() });
    expect(bookingsFor(delivery.orderId)).toHaveLength(1);

    const { requests, lookups } = carrier.stats();
    const settled = await consumer.consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), invocation('i-2'));
    expect(settled.outcome.kind).toBe('created');
    expect(carrier.stats()).toMatchObject({ lookups: lookups + 1, requests });
    await expectBookedOnce(delivery);
    expect(await recordOf(delivery)).toMatchObject({ answer: { via: 'lookup' }, attempt: 1 });
  });

  it('an owner that is still calling (its lease live) is waited for: another delivery calls nobody and ends nothing', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const slow = new GatedCarrier(httpCarrier(carrier));
    slow.beforeBook = new Gate();
    const gate = slow.beforeBook;
    const owner = shipmentConsumer({ store, carrier: slow, now: clock.now, leaseMs }).consume(
      delivery.envelope,
      delivery.body,
      new RecordingLog(),
      invocation('i-1'),
    );
    await gate.reached();
    const { requests, lookups } = carrier.stats();
    const waiting = await shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      redelivered(delivery, 2).envelope,
      delivery.body,
      new RecordingLog(),
      invocation('i-2'),
    );
    expect(waiting.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('another consumer (fulfilment/i-1) holds the booking') });
    expect(carrier.stats()).toMatchObject({ requests, lookups });
    expect(await recordOf(delivery)).toMatchObject({ owner: 'fulfilment/i-1', leaseExpiresAt: new Date(clock.now().getTime() + leaseMs).toISOString() });
    gate.open();
    expect((await owner).outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
  });

  it('the same invocation retrying after an unknown outcome looks up before it calls again', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const policy = { inInvocationMs: 10_000, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };
    const consumer = shipmentConsumer(
      { store, carrier: httpCarrier(carrier), now: clock.now, leaseMs },
      { retry: policy, sleep: async (ms) => clock.advance(ms) },
    );
    carrier.inject({ kind: 'drop-after-booking' });
    const result = await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(result.outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
    expect(await recordOf(delivery)).toMatchObject({ answer: { via: 'lookup' }, owner: 'fulfilment/i-1' });
  });

  it('5xx before booking and 429 with Retry-After leave the record in progress; the key is reused until it books once', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs });
    carrier.inject({ kind: 'unavailable' });
    carrier.inject({ kind: 'throttle', retryAfterSeconds: 7 });
    const unavailable = await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(unavailable.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('answered 503') });
    const throttled = await consumer.consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(throttled.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('answered 429') });
    expect((throttled.outcome as { cause?: { retryAfterMs?: number } }).cause?.retryAfterMs).toBe(7000);
    expect(bookingsFor(delivery.orderId)).toHaveLength(0);
    const booked = await consumer.consume(redelivered(delivery, 3).envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(booked.outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
  });

  it('an answer slower than the client timeout: the key is in flight at the carrier, so nobody calls again until the look-up finds the booking', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier, 200), now: clock.now, leaseMs });
    carrier.inject({ kind: 'slow', delayMs: 1500 });
    const first = await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(first.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('no answer within 200 ms') });
    clock.advance(leaseMs + 1);
    const inFlight = await consumer.consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), invocation('i-2'));
    expect(inFlight.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('still handling an earlier request') });
    expect(await recordOf(delivery)).toMatchObject({ owner: 'fulfilment/i-1', attempt: 1 });
    await eventually('the slow booking completes at the carrier', () => bookingsFor(delivery.orderId).length === 1, 10_000);
    const settled = await consumer.consume(redelivered(delivery, 3).envelope, delivery.body, new RecordingLog(), invocation('i-3'));
    expect(settled.outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
  });

  it('a consumer killed between the carrier answer and the completed record: the next one reconciles the booking by key', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const dying = new ScriptedStore(store);
    dying.killBeforeCommitOf = 'completed';
    const killed = await shipmentConsumer({ store: dying, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      delivery.envelope,
      delivery.body,
      new RecordingLog(),
      invocation('i-1'),
    );
    expect(killed.outcome).toMatchObject({ kind: 'retry', cause: expect.any(ProcessKilled) });
    expect(bookingsFor(delivery.orderId)).toHaveLength(1);
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress' });
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBeUndefined();

    clock.advance(leaseMs + 1);
    const next = await shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      redelivered(delivery, 2).envelope,
      delivery.body,
      new RecordingLog(),
      invocation('i-2'),
    );
    expect(next.outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
  });

  it('two consumers racing on one event: the store lets one create the record; the other waits for its lease and calls nobody', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const { key } = await keyOf(delivery);
    // Both read "no record" before either creates: the create, not the read, decides.
    const gate = new Gate();
    const racing = new ScriptedStore(store);
    racing.holdAfterRead = { id: shipmentRecordId(key), gate, times: 2 };
    // The winner is held at the carrier until the loser has decided, so the loser meets a live lease.
    const shared = new GatedCarrier(httpCarrier(carrier));
    shared.beforeBook = new Gate();
    const atCarrier = shared.beforeBook;
    const a = shipmentConsumer({ store: racing, carrier: shared, now: clock.now, leaseMs }).consume(
      delivery.envelope,
      delivery.body,
      new RecordingLog(),
      invocation('a'),
    );
    const b = shipmentConsumer({ store: racing, carrier: shared, now: clock.now, leaseMs }).consume(
      redelivered(delivery, 2).envelope,
      delivery.body,
      new RecordingLog(),
      invocation('b'),
    );
    await eventually('both consumers have read the absent record', () => (racing as unknown as { held: number }).held === 2, 5_000);
    gate.open();
    await atCarrier.reached();
    const loser = await Promise.race([a, b]);
    expect(loser.outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/another consumer \(fulfilment\/[ab]\) holds the booking/) });
    atCarrier.open();
    const kinds = (await Promise.all([a, b])).map((r) => r.outcome.kind).sort();
    expect(kinds).toEqual(['created', 'retry']);
    await expectBookedOnce(delivery);
  });

  it('a slow owner whose lease was taken over cannot overwrite the new owner: its late answer is a duplicate', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const slow = new GatedCarrier(httpCarrier(carrier));
    slow.beforeBook = new Gate();
    const gate = slow.beforeBook;
    const owner = shipmentConsumer({ store, carrier: slow, now: clock.now, leaseMs }).consume(
      delivery.envelope,
      delivery.body,
      new RecordingLog(),
      invocation('slow'),
    );
    await gate.reached(); // the slow owner holds its lease and has not called yet
    clock.advance(leaseMs + 1);
    const takeover = await shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      redelivered(delivery, 2).envelope,
      delivery.body,
      new RecordingLog(),
      invocation('new'),
    );
    expect(takeover.outcome.kind).toBe('created');
    const replays = carrier.stats().replays;
    gate.open();
    const late = await owner;
    expect(late.outcome.kind).toBe('duplicate');
    expect(carrier.stats().replays).toBe(replays + 1); // it did call, under the same key, and got the same booking back
    await expectBookedOnce(delivery);
    expect(await recordOf(delivery)).toMatchObject({ owner: 'fulfilment/new', attempt: 2, answer: { via: 'booking' } });
  });

  it('a change to the order between its read and the batch is absorbed: the order is read again, the record etag still holds', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const gate = new Gate();
    const scripted = new ScriptedStore(store);
    scripted.holdAfterRead = { id: delivery.orderId, gate, times: 1 };
    const result = shipmentConsumer({ store: scripted, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      delivery.envelope,
      delivery.body,
      new RecordingLog(),
      invocation('i-1'),
    );
    await gate.reached();
    const { lookups } = carrier.stats();
    const order = await store.read<OrderDocument>(delivery.orderId, delivery.orderId);
    const paid: OrderDocument = { ...order!.document, paymentCount: 1, amountPaid: 5 };
    expect(await store.commit(delivery.orderId, [replace(paid, order!.etag)])).toEqual({ kind: 'committed' });
    gate.open();
    expect((await result).outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
    expect(await orderOf(store, delivery.orderId)).toMatchObject({ paymentCount: 1, amountPaid: 5 });
    // Only the order was read again: the booking was not looked up at the carrier.
    expect(carrier.stats().lookups).toBe(lookups);
  });

  it('a carrier refusal is recorded with its reason and bound for the dead-letter queue; a redelivery does not call again', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs });
    carrier.inject({ kind: 'refuse', status: 400, title: 'postcode not served' });
    const log = new RecordingLog();
    const refused = await consumer.consume({ ...delivery.envelope, sequenceNumber: 41 }, delivery.body, log, invocation('i-1'));
    expect(refused.outcome).toMatchObject({
      kind: 'invalid',
      error: { code: 'CarrierRefused', description: expect.stringContaining('400: postcode not served') },
    });
    expect(log.lines[0]?.level).toBe('error');
    expect(await recordOf(delivery)).toMatchObject({
      state: 'refused',
      refusal: { reason: 'the carrier answered 400: postcode not served' },
      answer: { status: 400 },
    });
    const rejection = await store.read<RejectionDocument>(
      rejectedMessagesPartition(delivery.envelope.messageId ?? ''),
      rejectionDocumentId(delivery.envelope.messageId ?? '', 'fulfilment'),
    );
    expect(rejection?.document).toMatchObject({ reason: 'CarrierRefused', messageType: 'OrderAccepted' });
    const requests = carrier.stats().requests;
    const again = await consumer.consume(redelivered(delivery, 2).envelope, delivery.body, new RecordingLog(), invocation('i-2'));
    expect(again.outcome).toMatchObject({ kind: 'invalid', error: { code: 'CarrierRefused' } });
    expect(carrier.stats().requests).toBe(requests);
    expect(bookingsFor(delivery.orderId)).toHaveLength(0);
    expect((await orderOf(store, delivery.orderId))?.shipmentId).toBeUndefined();
  });

  it('a refused credential (401) is not an answer about the shipment: the record stays in progress for a retry', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const wrongKey = new (await import('../../src/shipments/index.js')).HttpCarrierClient({
      baseUrl: carrier.url,
      apiKey: 'rotated-away',
      timeoutMs: 5000,
      now: clock.now,
    });
    const result = await shipmentConsumer({ store, carrier: wrongKey, now: clock.now, leaseMs }).consume(
      delivery.envelope,
      delivery.body,
      new RecordingLog(),
      invocation('i-1'),
    );
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('answered 401') });
    expect(await recordOf(delivery)).toMatchObject({ state: 'in-progress' });
  });

  it('the Idempotency-Key header is an sf-string the carrier parses back to the key', () => {
    expect(idempotencyKeyHeader('a|b%7C"c\\d')).toBe('"a|b%7C\\"c\\\\d"');
    expect(idempotencyKeyHeader('café')).toBe('"caf%C3%A9"');
  });

  it('a consumer-level conflict, an invalid event, and a rejection record that cannot be written', async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs });
    carrier.inject({ kind: 'unavailable' });
    await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    // The same event key with another request: a conflict, recorded for the dead-letter tool.
    const edited = { ...(delivery.body as Record<string, unknown>), total: 1 };
    const conflict = await consumer.consume(redelivered(delivery, 2).envelope, edited, new RecordingLog(), invocation('i-2'));
    expect(conflict.outcome).toMatchObject({ kind: 'conflict', error: { code: 'PayloadConflict' } });
    const recorded = await store.read<RejectionDocument>(
      rejectedMessagesPartition(delivery.envelope.messageId ?? ''),
      rejectionDocumentId(delivery.envelope.messageId ?? '', 'fulfilment'),
    );
    expect(recorded?.document).toMatchObject({ reason: 'PayloadConflict', messageType: 'OrderAccepted' });
    // An event that breaks the schema: invalid, with its reason, before anything is written.
    const invalid = await consumer.consume({ ...delivery.envelope, messageId: 'bad-1' }, { orderId: delivery.orderId }, new RecordingLog(), invocation('i-3'));
    expect(invalid).toMatchObject({ outcome: { kind: 'invalid', error: { code: 'SchemaViolation' } }, type: 'OrderAccepted' });
    expect((await store.read<RejectionDocument>(rejectedMessagesPartition('bad-1'), rejectionDocumentId('bad-1', 'fulfilment')))?.document.reason).toBe(
      'SchemaViolation',
    );
    // When the rejection cannot be recorded, the message is handed back rather than dead-lettered without a reason.
    const failing: DocumentStore = {
      ...store,
      read: store.read.bind(store),
      find: store.find.bind(store),
      commit: () => Promise.reject(new Error('503 from the store')),
    };
    const unrecorded = await shipmentConsumer({ store: failing, carrier: httpCarrier(carrier), now: clock.now, leaseMs }).consume(
      { ...delivery.envelope, messageId: 'bad-2' },
      { orderId: delivery.orderId },
      new RecordingLog(),
      invocation('i-4'),
    );
    expect(unrecorded.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('could not record rejection') });
  });

  it("an event handed to a delayed copy releases its owner's lease, so the copy need not wait it out", async () => {
    const clock = new TestClock();
    const delivery = await storedOrderWithEvent(store, clock.now());
    const scheduled: ScheduledCopy[] = [];
    const scheduler: RetryScheduler = { schedule: async (copy) => void scheduled.push(copy), close: async () => {} };
    const policy = { inInvocationMs: 0, firstDelayMs: 1000, maxDelayMs: 2000, budgetMs: 86_400_000 };
    const consumer = shipmentConsumer({ store, carrier: httpCarrier(carrier), now: clock.now, leaseMs }, { retry: policy, scheduler });
    carrier.inject({ kind: 'unavailable' });
    const result = await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), invocation('i-1'));
    expect(result.outcome).toMatchObject({ kind: 'rescheduled', attempt: 1 });
    expect(scheduled[0]).toMatchObject({
      messageId: expect.stringMatching(keyedCopyId(1)),
      applicationProperties: { 'retry-of': delivery.envelope.messageId },
    });
    expect(await recordOf(delivery)).toMatchObject({ owner: 'fulfilment/i-1', leaseExpiresAt: clock.now().toISOString() });
    const copy = await consumer.consume(redelivered(delivery, 1).envelope, delivery.body, new RecordingLog(), invocation('i-2'));
    expect(copy.outcome.kind).toBe('created');
    await expectBookedOnce(delivery);
  });
});
