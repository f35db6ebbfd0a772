import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { dedupKeyOf, rejectedMessagesPartition, rejectionDocumentId } from '../../../src/orders/index.js';
import type { RetryScheduler } from '../../../src/servicebus/index.js';
import { CarrierUnavailableError, parseShipmentEvent, shipmentRecordId } from '../../../src/shipments/index.js';
import type { BookingAnswer, CarrierClient, LookupAnswer, ShipmentRecord } from '../../../src/shipments/index.js';
import { InterleavingStore } from '../../support/interleavingStore.js';
import { RecordingLog } from '../../support/recordingLog.js';
import { signedRetryProperties } from '../../support/signedRetryState.js';
import { TestClock, shipmentConsumer, storedOrderWithEvent } from '../../support/shipmentHarness.js';

// The fulfilment consumer around the booking: what it hands back, rejects and reports, over the
// in-memory store and a carrier that answers as told (our own port).
const leaseMs = 60_000;
const retry = { inInvocationMs: 0, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };

function carrierAnswering(book: () => Promise<BookingAnswer>): CarrierClient {
  return { book, lookup: (): Promise<LookupAnswer> => Promise.resolve({ kind: 'not-found' }) };
}

const booked = () => Promise.resolve<BookingAnswer>({ kind: 'booked', shipmentId: 'SHP-1', answer: { status: 201, body: { shipmentId: 'SHP-1' } } });

function setUp(carrier: CarrierClient, extra: Parameters<typeof shipmentConsumer>[1] = {}) {
  const clock = new TestClock();
  const store = new InterleavingStore(new InMemoryDocumentStore(() => clock.now().getTime()));
  return { clock, store, consumer: shipmentConsumer({ store, carrier, now: clock.now, leaseMs }, extra) };
}

describe('the shipment consumer', () => {
  it('books an event in five store round trips, and asks nothing more of the store', async () => {
    const t = setUp(carrierAnswering(booked));
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    t.store.reads = t.store.commits = 0;
    expect((await t.consumer.consume(delivery.envelope, delivery.body, new RecordingLog())).outcome.kind).toBe('created');
    // Read the record, create it, read it back, read the order, write both.
    expect([t.store.reads, t.store.commits]).toEqual([3, 2]);
  });

  it("an event handed back ends its owner's lease at once, so the next delivery need not wait it out", async () => {
    const t = setUp(carrierAnswering(() => Promise.reject(new CarrierUnavailableError('the carrier answered 503', 503))));
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    expect((await t.consumer.consume(delivery.envelope, delivery.body, new RecordingLog())).outcome.kind).toBe('retry');
    const key = parseShipmentEvent(delivery.envelope, delivery.body, 1 << 20).key;
    const record = await t.store.read<ShipmentRecord>(delivery.orderId, shipmentRecordId(key));
    expect(record?.document).toMatchObject({ state: 'in-progress', leaseExpiresAt: t.clock.now().toISOString() });
  });

  it('reports the time the delivery took, not more', async () => {
    const t = setUp(carrierAnswering(booked));
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    const log = new RecordingLog();
    const before = performance.now();
    await t.consumer.consume(delivery.envelope, delivery.body, log);
    const elapsed = performance.now() - before;
    const durationMs = Number(log.lines[0]?.record.durationMs);
    expect(durationMs).toBeGreaterThanOrEqual(0);
    expect(durationMs).toBeLessThanOrEqual(elapsed + 0.01);
  });

  it('a carrier client that fails in a way it does not name is a retry naming the error, never a rejection', async () => {
    const t = setUp(carrierAnswering(() => Promise.reject(new TypeError('undefined is not a function'))));
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    const result = await t.consumer.consume(delivery.envelope, delivery.body, new RecordingLog());
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: 'TypeError: undefined is not a function', cause: expect.any(TypeError) });
    expect(
      await t.store.read(
        rejectedMessagesPartition(String(delivery.envelope.messageId)),
        rejectionDocumentId(String(delivery.envelope.messageId), 'fulfilment'),
      ),
    ).toBeUndefined();
  });

  it('an event that fails its schema is rejected under the key the error names', async () => {
    const t = setUp(carrierAnswering(booked));
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    const result = await t.consumer.consume(delivery.envelope, { nothing: 'useful' }, new RecordingLog());
    expect(result.outcome).toMatchObject({ kind: 'invalid', error: { code: 'SchemaViolation' } });
    expect(result.dedupKey).toEqual(expect.any(String));
    expect(result.dedupKey).toBe((result.outcome as { error: { dedupKey?: string } }).error.dedupKey);
  });

  it('a delivery still failing once its delayed-retry budget is spent is rejected as RetryBudgetExhausted, its rejection recorded', async () => {
    const scheduled: unknown[] = [];
    const scheduler: RetryScheduler = { schedule: (copy) => Promise.resolve(void scheduled.push(copy)), close: () => Promise.resolve() };
    const t = setUp(
      carrierAnswering(() => Promise.reject(new CarrierUnavailableError('the carrier answered 503', 503))),
      { retry, scheduler },
    );
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    const firstFailureAt = new Date(t.clock.now().getTime() - 2 * retry.budgetMs).toISOString();
    const messageId = String(delivery.envelope.messageId);
    const state = { dedupKey: String(dedupKeyOf(delivery.envelope, delivery.body)), attempt: 7, firstFailureAt, root: messageId };
    const envelope = {
      ...delivery.envelope,
      applicationProperties: { ...delivery.envelope.applicationProperties, ...signedRetryProperties(messageId, state) },
    };
    const result = await t.consumer.consume(envelope, delivery.body, new RecordingLog());
    expect(result.outcome).toMatchObject({ kind: 'invalid', error: { code: 'RetryBudgetExhausted' } });
    expect(scheduled).toEqual([]);
    const rejection = await t.store.read<{ id: string; reason: string }>(
      rejectedMessagesPartition(String(envelope.messageId)),
      rejectionDocumentId(String(envelope.messageId), 'fulfilment'),
    );
    expect(rejection?.document).toMatchObject({ reason: 'RetryBudgetExhausted' });
  });
});
