import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, TransientStoreError, create, replace } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, WriteOperation } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { resolveShipment } from '../../../src/cli/shipmentCommands.js';
import { bookShipmentOnce, reconcileShipments, shipmentRecordId } from '../../../src/shipments/index.js';
import type { BookingAnswer, CarrierClient, LookupAnswer, ShipmentContext, ShipmentEvent, ShipmentRecord } from '../../../src/shipments/index.js';
import { CarrierUnavailableError } from '../../../src/shipments/index.js';

// Schedules a reviewer tried against the reconciler: two runs at once, an operator in the middle of
// a round, and the answer of the booking's write lost. The in-memory store, a clock the test moves,
// and a carrier that runs what the test says at the moment it is called.
const leaseMs = 60_000;
const start = Date.parse('2026-12-01T10:00:00.000Z');
const options = { maxAttempts: 2, batchSize: 10, transientBudgetMs: 86_400_000 };

const event: ShipmentEvent = {
  key: 'src|evt-1',
  messageId: 'evt-1',
  orderId: 'o-1',
  request: { orderReference: 'o-1', customerId: 'c-1', declaredValue: 20, currency: 'EUR' },
  fingerprint: 'fp-1',
};

const booked = (shipmentId: string): BookingAnswer => ({ kind: 'booked', shipmentId, answer: { status: 201, body: { shipmentId } } });

/** Answers from a script; `meanwhile` runs inside the call, before its answer, as another process would. */
class ScheduledCarrier implements CarrierClient {
  readonly calls: string[] = [];
  meanwhile?: () => Promise<void>;
  constructor(private readonly script: { lookup?: LookupAnswer | Error; book?: BookingAnswer | Error }) {}
  async lookup(): Promise<LookupAnswer> {
    this.calls.push('lookup');
    await this.runMeanwhile();
    return answer(this.script.lookup ?? { kind: 'not-found' });
  }
  async book(): Promise<BookingAnswer> {
    this.calls.push('book');
    await this.runMeanwhile();
    return answer(this.script.book ?? booked('SHP-1'));
  }
  private async runMeanwhile(): Promise<void> {
    const run = this.meanwhile;
    this.meanwhile = undefined;
    await run?.();
  }
}

function answer<A>(a: A | Error): A {
  if (a instanceof Error) throw a;
  return a;
}

/** The write reaches the store, its answer does not (a timeout after the commit). */
class LosingAnswerStore implements DocumentStore {
  loseAnswerOf?: (operations: readonly WriteOperation[]) => boolean;
  constructor(private readonly inner: DocumentStore) {}
  read: DocumentStore['read'] = (pk, id) => this.inner.read(pk, id);
  find: DocumentStore['find'] = (query) => this.inner.find(query);
  async commit(pk: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    const result = await this.inner.commit(pk, operations);
    if (this.loseAnswerOf?.(operations)) {
      this.loseAnswerOf = undefined;
      throw new TransientStoreError('the answer of a commit that was applied was lost');
    }
    return result;
  }
}

function setUp() {
  let now = start;
  const memory = new InMemoryDocumentStore(() => now);
  const store = new LosingAnswerStore(memory);
  const ctx = (carrier: CarrierClient): ShipmentContext => ({ store, carrier, now: () => new Date(now), leaseMs, maxConcurrencyAttempts: 3 });
  return { memory, store, ctx, now: () => now, advance: (ms: number) => (now += ms) };
}

type Env = ReturnType<typeof setUp>;

/** The order is stored, and its first owner called the carrier, got no answer and died: the lease runs out. */
async function abandoned(t: Env): Promise<void> {
  const order = {
    id: 'o-1',
    orderId: 'o-1',
    docType: 'order',
    customerId: 'c-1',
    currency: 'EUR',
    lines: [],
    total: 20,
    placedAt: '2026-12-01T09:00:00Z',
    status: 'Accepted',
    statusVersion: 0,
    amountPaid: 0,
    paymentCount: 0,
    dedupKey: 'k',
    fingerprint: 'f',
    processedAt: '2026-12-01T09:00:00Z',
  } as OrderDocument;
  await t.memory.commit('o-1', [create(order)]);
  const outcome = await bookShipmentOnce(event, t.ctx(new ScheduledCarrier({ book: new CarrierUnavailableError('no answer') })), { owner: 'dead' });
  expect(outcome.outcome.kind).toBe('retry');
  t.advance(leaseMs + 1);
}

const recordOf = async (t: Env) => (await t.memory.read<ShipmentRecord>('o-1', shipmentRecordId(event.key)))?.document;
const orderOf = async (t: Env) => (await t.memory.read<OrderDocument>('o-1', 'o-1'))?.document;

describe('two reconcilers at once', () => {
  it('both read the expired record and find nothing at the carrier: one takes it over and books, the other loses the takeover and calls nobody, and no round is counted', async () => {
    const t = setUp();
    await abandoned(t);
    const second = new ScheduledCarrier({ book: booked('SHP-1') });
    const first = new ScheduledCarrier({});
    // The first run's look-up is under way when the second run does its whole round.
    first.meanwhile = async () => {
      const run = await reconcileShipments(t.ctx(second), options, { owner: 'reconciler/2' });
      expect(run.items).toEqual([expect.objectContaining({ result: 'completed', shipmentId: 'SHP-1' })]);
    };
    const run = await reconcileShipments(t.ctx(first), options, { owner: 'reconciler/1' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'taken-by-another' })]);
    expect([first.calls, second.calls]).toEqual([['lookup'], ['lookup', 'book']]);
    expect(await recordOf(t)).toMatchObject({ state: 'completed', shipmentId: 'SHP-1', owner: 'reconciler/2', attempt: 2, reconcileAttempts: 0 });
    expect((await orderOf(t))?.shipmentId).toBe('SHP-1');
  });
});

describe('two reconcilers at once, the carrier still working', () => {
  // Found by the shipments exploration world (seed 669929978): two overlapping runs each saw the same
  // request in flight and each counted a round, so one observation escalated at maxAttempts 2.
  it('both read the expired record and both look-ups say in flight: one round is counted, not two, and nothing is escalated', async () => {
    const t = setUp();
    await abandoned(t);
    const second = new ScheduledCarrier({ lookup: { kind: 'in-flight' } });
    const first = new ScheduledCarrier({ lookup: { kind: 'in-flight' } });
    first.meanwhile = async () => {
      const run = await reconcileShipments(t.ctx(second), options, { owner: 'reconciler/2' });
      expect(run.items).toEqual([expect.objectContaining({ result: 'still-in-progress' })]);
    };
    const run = await reconcileShipments(t.ctx(first), options, { owner: 'reconciler/1' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'taken-by-another' })]);
    expect(await recordOf(t)).toMatchObject({ state: 'in-progress', reconcileAttempts: 1 });
    expect((await recordOf(t))?.escalation).toBeUndefined();
  });

  // Found by the shipments world (seed 42261206): three runs one after another at one instant (a
  // backlog of timer runs, a run started by hand) each saw the request in flight: escalated within
  // seconds. A round counts only a lease after the last one, so N rounds mean N - 1 leases in flight.
  it('runs one after another within a lease count one round: the request has not been in flight for long', async () => {
    const t = setUp();
    await abandoned(t);
    for (const owner of ['reconciler/1', 'reconciler/2', 'reconciler/3']) {
      const run = await reconcileShipments(t.ctx(new ScheduledCarrier({ lookup: { kind: 'in-flight' } })), options, { owner });
      expect(run.items, owner).toEqual([expect.objectContaining({ result: 'still-in-progress' })]);
      t.advance(leaseMs / 3);
    }
    expect(await recordOf(t)).toMatchObject({ state: 'in-progress', reconcileAttempts: 1 });
  });

  it('a later run, after the first counted, counts its own round', async () => {
    const t = setUp();
    await abandoned(t);
    await reconcileShipments(t.ctx(new ScheduledCarrier({ lookup: { kind: 'in-flight' } })), options, { owner: 'reconciler/1' });
    t.advance(120_000);
    const run = await reconcileShipments(t.ctx(new ScheduledCarrier({ lookup: { kind: 'in-flight' } })), options, { owner: 'reconciler/2' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'escalated' })]);
    expect(await recordOf(t)).toMatchObject({ state: 'escalated', reconcileAttempts: 2 });
  });
});

describe('the reconciler and an operator', () => {
  it('`shipments resolve --retry` between the round’s read and its count: the round is not counted against the record the operator handed back', async () => {
    const t = setUp();
    await abandoned(t);
    const inFlight = new ScheduledCarrier({ lookup: { kind: 'in-flight' } });
    inFlight.meanwhile = async () => {
      const report = await resolveShipment({ store: t.store, now: t.now }, 'o-1', { kind: 'retry' }, false);
      expect(report.outcome).toBe('requeued');
    };
    // One round left before escalation: had it been counted, the record would be escalated now.
    const run = await reconcileShipments(t.ctx(inFlight), { ...options, maxAttempts: 1 }, { owner: 'reconciler/1' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'taken-by-another' })]);
    expect(await recordOf(t)).toMatchObject({ state: 'in-progress', owner: 'operator', reconcileAttempts: 0 });
    expect((await recordOf(t))?.escalation).toBeUndefined();

    // The next run (the operator's lease ended at the moment of the requeue) books it under the same key.
    t.advance(1);
    const next = await reconcileShipments(t.ctx(new ScheduledCarrier({ book: booked('SHP-1') })), options, { owner: 'reconciler/2' });
    expect(next.items).toEqual([expect.objectContaining({ result: 'completed', shipmentId: 'SHP-1' })]);
  });
});

describe('the answer of a write lost after it was applied', () => {
  it("the reconciler's booking write is applied but its answer lost: the run fails, the next run has nothing to do, and the event's redelivery is a duplicate with the shipment id", async () => {
    const t = setUp();
    await abandoned(t);
    t.store.loseAnswerOf = (operations) => (operations[0]?.document as { state?: string }).state === 'completed';
    const carrier = new ScheduledCarrier({ book: booked('SHP-1') });
    await expect(reconcileShipments(t.ctx(carrier), options, { owner: 'reconciler/1' })).rejects.toBeInstanceOf(TransientStoreError);
    expect(await recordOf(t)).toMatchObject({ state: 'completed', shipmentId: 'SHP-1' });
    expect((await orderOf(t))?.shipmentId).toBe('SHP-1');

    t.advance(leaseMs + 1);
    const nobody = new ScheduledCarrier({});
    expect(await reconcileShipments(t.ctx(nobody), options, { owner: 'reconciler/2' })).toEqual({ examined: 0, items: [] });
    expect(await bookShipmentOnce(event, t.ctx(nobody), { owner: 'redelivery' })).toEqual({
      outcome: { kind: 'duplicate' },
      shipmentId: 'SHP-1',
      via: 'record',
    });
    expect(nobody.calls).toEqual([]);
    expect(carrier.calls).toEqual(['lookup', 'book']);
  });

  it("a reconciler's takeover is applied but its answer lost: it calls nobody, and the next caller finds a lease it must wait out, then looks the key up before it books", async () => {
    const t = setUp();
    await abandoned(t);
    t.store.loseAnswerOf = (operations) => (operations[0]?.document as { owner?: string; state?: string }).owner === 'reconciler/1';
    const carrier = new ScheduledCarrier({});
    await expect(reconcileShipments(t.ctx(carrier), options, { owner: 'reconciler/1' })).rejects.toBeInstanceOf(TransientStoreError);
    expect(carrier.calls).toEqual(['lookup']);
    expect(await recordOf(t)).toMatchObject({ state: 'in-progress', owner: 'reconciler/1', attempt: 2 });

    const waiting = new ScheduledCarrier({});
    expect((await bookShipmentOnce(event, t.ctx(waiting), { owner: 'redelivery' })).outcome).toMatchObject({
      kind: 'retry',
      reason: expect.stringContaining('reconciler/1'),
    });
    expect(waiting.calls).toEqual([]);
    t.advance(leaseMs + 1);
    const later = new ScheduledCarrier({ book: booked('SHP-1') });
    expect(await bookShipmentOnce(event, t.ctx(later), { owner: 'redelivery-2' })).toMatchObject({ outcome: { kind: 'created' }, shipmentId: 'SHP-1' });
    expect(later.calls).toEqual(['lookup', 'book']);
  });
});

describe('clocks that disagree', () => {
  it("a reconciler whose clock runs a lease ahead escalates a live owner's call (its look-up says in flight), and the owner's booking in hand is still recorded, with the order's shipment id", async () => {
    const t = setUp();
    const order = {
      id: 'o-1',
      orderId: 'o-1',
      docType: 'order',
      customerId: 'c-1',
      currency: 'EUR',
      lines: [],
      total: 20,
      placedAt: '2026-12-01T09:00:00Z',
      status: 'Accepted',
      statusVersion: 0,
      amountPaid: 0,
      paymentCount: 0,
      dedupKey: 'k',
      fingerprint: 'f',
      processedAt: '2026-12-01T09:00:00Z',
    } as OrderDocument;
    await t.memory.commit('o-1', [create(order)]);
    const owner = new ScheduledCarrier({ book: booked('SHP-1') });
    // While the owner's call is at the carrier, a reconciler two minutes ahead takes its live lease for expired.
    owner.meanwhile = async () => {
      const ahead = { ...t.ctx(new ScheduledCarrier({ lookup: { kind: 'in-flight' } })), now: () => new Date(t.now() + 2 * leaseMs) };
      const run = await reconcileShipments(ahead, { ...options, maxAttempts: 1 }, { owner: 'reconciler/ahead' });
      expect(run.items).toEqual([expect.objectContaining({ result: 'escalated' })]);
    };
    expect(await bookShipmentOnce(event, t.ctx(owner), { owner: 'owner' })).toEqual({ outcome: { kind: 'created' }, shipmentId: 'SHP-1', via: 'booking' });
    expect(owner.calls).toEqual(['book']);
    expect(await recordOf(t)).toMatchObject({ state: 'completed', shipmentId: 'SHP-1' });
    expect((await orderOf(t))?.shipmentId).toBe('SHP-1');
  });
});

describe('an operator resolving a booking for an order that already holds a shipment', () => {
  // Two records for one order (two OrderAccepted keys, a demo's seeded record): the order already holds
  // the shipment the other record booked. Recording another id would replace it on the order; a retry
  // would book a second shipment at the carrier. Both are refused, naming the shipment the order holds.
  it.each([
    { action: { kind: 'record' as const, shipmentId: 'SHP-2' }, name: '--shipment-id' },
    { action: { kind: 'retry' as const }, name: '--retry' },
  ])('$name is refused, and the order keeps its shipment', async ({ action }) => {
    const t = setUp();
    await abandoned(t);
    const order = (await t.memory.read<OrderDocument>('o-1', 'o-1'))!;
    const holding: OrderDocument = { ...order.document, shipmentId: 'SHP-OTHER' };
    await t.memory.commit('o-1', [replace(holding, order.etag)]);
    const before = await recordOf(t);

    const report = await resolveShipment({ store: t.store, now: t.now }, 'o-1', action, false);

    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('SHP-OTHER') });
    expect((await orderOf(t))?.shipmentId).toBe('SHP-OTHER');
    expect(await recordOf(t)).toEqual(before);
  });

  it('recording the shipment the order already holds is allowed (the record catches up with the order)', async () => {
    const t = setUp();
    await abandoned(t);
    const order = (await t.memory.read<OrderDocument>('o-1', 'o-1'))!;
    const holding: OrderDocument = { ...order.document, shipmentId: 'SHP-1' };
    await t.memory.commit('o-1', [replace(holding, order.etag)]);

    const report = await resolveShipment({ store: t.store, now: t.now }, 'o-1', { kind: 'record', shipmentId: 'SHP-1' }, false);

    expect(report.outcome).toBe('recorded');
    expect(await recordOf(t)).toMatchObject({ state: 'completed', shipmentId: 'SHP-1' });
  });
});
