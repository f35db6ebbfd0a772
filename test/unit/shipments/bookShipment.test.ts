import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { bookShipmentOnce, leaseIsLive, reconcileShipments, shipmentRecordId } from '../../../src/shipments/index.js';
import type { BookingAnswer, CarrierClient, LookupAnswer, ShipmentEvent, ShipmentRecord } from '../../../src/shipments/index.js';
import { CarrierUnavailableError } from '../../../src/shipments/index.js';
import { releaseLease } from '../../../src/shipments/bookShipment.js';
import { AnsweringStore, firstIs } from '../../support/answeringStore.js';

// The two-phase booking's bookkeeping, over the in-memory reference store and a scripted carrier
// (our own port, answering as told): what each state of the record holds, field by field.
const leaseMs = 60_000;
const start = Date.parse('2026-12-01T10:00:00.000Z');
const day = 86_400_000;

class ScriptedCarrier implements CarrierClient {
  readonly calls: string[] = [];
  constructor(
    private readonly bookings: (BookingAnswer | Error)[],
    private readonly lookups: (LookupAnswer | Error)[] = [],
  ) {}
  async book(): Promise<BookingAnswer> {
    this.calls.push('book');
    const next = this.bookings.shift() ?? new Error('no booking scripted');
    if (next instanceof Error) throw next;
    return next;
  }
  async lookup(): Promise<LookupAnswer> {
    this.calls.push('lookup');
    const next = this.lookups.shift() ?? new Error('no look-up scripted');
    if (next instanceof Error) throw next;
    return next;
  }
}

const booked = (shipmentId: string): BookingAnswer => ({ kind: 'booked', shipmentId, answer: { status: 201, body: { shipmentId } } });
const down = () => new CarrierUnavailableError('the carrier answered 503', 503);

function setUp(carrier: CarrierClient, at = start) {
  let now = at;
  const store: DocumentStore = new InMemoryDocumentStore(() => now);
  const ctx = { store, carrier, now: () => new Date(now), leaseMs, maxConcurrencyAttempts: 3 };
  return { store, ctx, advance: (ms: number) => (now += ms) };
}

const event: ShipmentEvent = {
  key: 'src|evt-1',
  messageId: 'evt-1',
  orderId: 'o-1',
  request: { orderReference: 'o-1', customerId: 'c-1', declaredValue: 20, currency: 'EUR' },
  fingerprint: 'fp-1',
};

async function storeOrder(store: DocumentStore, extra: Partial<OrderDocument> = {}): Promise<void> {
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
    ...extra,
  } as OrderDocument;
  await store.commit('o-1', [create(order)]);
}

const recordIn = async (store: DocumentStore) => (await store.read<ShipmentRecord>('o-1', shipmentRecordId(event.key)))?.document;
const orderIn = async (store: DocumentStore) => (await store.read<OrderDocument>('o-1', 'o-1'))?.document;

describe('the shipment record', () => {
  it('is created in progress with the request, its owner, attempt 1 and a lease from now, before the carrier is called', async () => {
    const carrier = new ScriptedCarrier([down()]);
    const { store, ctx } = setUp(carrier);
    await storeOrder(store);
    expect((await bookShipmentOnce(event, ctx, { owner: 'me' })).outcome.kind).toBe('retry');
    expect(await recordIn(store)).toEqual({
      id: 'shipment|src%7Cevt-1',
      orderId: 'o-1',
      docType: 'shipment',
      idempotencyKey: 'src|evt-1',
      messageId: 'evt-1',
      request: event.request,
      requestFingerprint: 'fp-1',
      state: 'in-progress',
      owner: 'me',
      attempt: 1,
      leaseExpiresAt: '2026-12-01T10:01:00.000Z',
      reconcileAttempts: 0,
      startedAt: '2026-12-01T10:00:00.000Z',
      updatedAt: '2026-12-01T10:00:00.000Z',
    });
  });

  it('a lease is live until the instant it expires, and not at that instant', () => {
    const record = { leaseExpiresAt: '2026-12-01T10:01:00.000Z' } as ShipmentRecord;
    expect(leaseIsLive(record, new Date('2026-12-01T10:00:59.999Z'))).toBe(true);
    expect(leaseIsLive(record, new Date('2026-12-01T10:01:00.000Z'))).toBe(false);
  });

  it('completed: the carrier answer, the shipment id and the time, with the order, in one write', async () => {
    const { store, ctx, advance } = setUp(new ScriptedCarrier([booked('SHP-1')]));
    await storeOrder(store);
    advance(0);
    const result = await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(result).toEqual({ outcome: { kind: 'created' }, shipmentId: 'SHP-1', via: 'booking' });
    expect(await recordIn(store)).toMatchObject({
      state: 'completed',
      shipmentId: 'SHP-1',
      answer: { status: 201, body: { shipmentId: 'SHP-1' }, via: 'booking' },
      updatedAt: '2026-12-01T10:00:00.000Z',
    });
    expect(await orderIn(store)).toMatchObject({ shipmentId: 'SHP-1', shipmentBookedAt: '2026-12-01T10:00:00.000Z' });
  });

  it('an order that already holds the shipment id is left as it is', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([booked('SHP-1')]));
    await storeOrder(store, { shipmentId: 'SHP-1', shipmentBookedAt: '2026-11-30T00:00:00.000Z' });
    expect((await bookShipmentOnce(event, ctx, { owner: 'me' })).outcome.kind).toBe('created');
    expect(await orderIn(store)).toMatchObject({ shipmentId: 'SHP-1', shipmentBookedAt: '2026-11-30T00:00:00.000Z' });
  });

  it('refused: the carrier answer and its reason, from the booking', async () => {
    const { store, ctx } = setUp(
      new ScriptedCarrier([{ kind: 'refused', answer: { status: 400, body: { title: 'no' } }, reason: 'the carrier answered 400: no' }]),
    );
    await storeOrder(store);
    const result = await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(result.outcome).toMatchObject({
      kind: 'invalid',
      error: { code: 'CarrierRefused', description: 'the carrier refused the shipment for order o-1: the carrier answered 400: no', dedupKey: 'src|evt-1' },
    });
    expect(await recordIn(store)).toMatchObject({
      state: 'refused',
      refusal: { reason: 'the carrier answered 400: no' },
      answer: { status: 400, via: 'booking' },
    });
    expect((await orderIn(store))?.shipmentId).toBeUndefined();
  });

  it('taken over: the new owner, the next attempt and a fresh lease, then called again with the same key', async () => {
    const carrier = new ScriptedCarrier([down(), booked('SHP-2')], [{ kind: 'not-found' }]);
    const { store, ctx, advance } = setUp(carrier);
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'first' });
    advance(leaseMs);
    const result = await bookShipmentOnce(event, ctx, { owner: 'second' });
    expect(result).toMatchObject({ outcome: { kind: 'created' }, shipmentId: 'SHP-2' });
    expect(carrier.calls).toEqual(['book', 'lookup', 'book']);
    expect(await recordIn(store)).toMatchObject({
      owner: 'second',
      attempt: 2,
      leaseExpiresAt: '2026-12-01T10:02:00.000Z',
      startedAt: '2026-12-01T10:00:00.000Z',
      updatedAt: '2026-12-01T10:01:00.000Z',
    });
  });

  it('a record started for another request under the key is a conflict, and nobody is called', async () => {
    const carrier = new ScriptedCarrier([down()]);
    const { store, ctx } = setUp(carrier);
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    const other = await bookShipmentOnce({ ...event, fingerprint: 'fp-2' }, ctx, { owner: 'me' });
    expect(other.outcome).toMatchObject({
      kind: 'conflict',
      error: { code: 'PayloadConflict', description: `shipment shipment|src%7Cevt-1 was started for another request under key "src|evt-1"` },
    });
    expect(carrier.calls).toEqual(['book']);
  });

  it('an order that is not stored cannot take its shipment id: the booking waits, the record in progress', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([booked('SHP-1')]));
    const result = await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: 'order o-1 is not stored, so its shipment cannot be recorded on it' });
    expect(await recordIn(store)).toMatchObject({ state: 'in-progress' });
  });
});

describe('releasing a lease', () => {
  it('ends only its own live in-progress lease, now', async () => {
    const { store, ctx, advance } = setUp(new ScriptedCarrier([down()]));
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(await releaseLease(ctx, 'o-1', event.key, 'someone-else')).toBe(false);
    expect((await recordIn(store))?.leaseExpiresAt).toBe('2026-12-01T10:01:00.000Z');
    advance(1000);
    expect(await releaseLease(ctx, 'o-1', event.key, 'me')).toBe(true);
    expect(await recordIn(store)).toMatchObject({
      leaseExpiresAt: '2026-12-01T10:00:01.000Z',
      updatedAt: '2026-12-01T10:00:01.000Z',
      owner: 'me',
      state: 'in-progress',
    });
    // Already ended, or no record at all: nothing to write.
    expect(await releaseLease(ctx, 'o-1', event.key, 'me')).toBe(false);
    expect(await releaseLease(ctx, 'o-1', 'no-such-key', 'me')).toBe(false);
  });

  it('leaves a settled record alone', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([booked('SHP-1')]));
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(await releaseLease(ctx, 'o-1', event.key, 'me')).toBe(false);
    expect(await recordIn(store)).toMatchObject({ state: 'completed' });
  });
});

describe('a reconcile round that cannot settle a record', () => {
  it('a round the carrier answers without an outcome (in flight) counts, and the last allowed one escalates with the reason', async () => {
    const inFlight: LookupAnswer = { kind: 'in-flight' };
    const carrier = new ScriptedCarrier([down()], [inFlight, inFlight]);
    const { store, ctx, advance } = setUp(carrier);
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    await releaseLease(ctx, 'o-1', event.key, 'me');
    advance(1); // a lease that ends now is found from the next instant
    const first = await reconcileShipments(ctx, { maxAttempts: 2, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    const reason = 'the carrier is still handling an earlier request under this key';
    expect(first).toEqual({ examined: 1, items: [{ id: 'shipment|src%7Cevt-1', orderId: 'o-1', result: 'still-in-progress', reason }] });
    const afterFirst = await recordIn(store);
    expect(afterFirst).toMatchObject({ state: 'in-progress', reconcileAttempts: 1, reconcileAttemptsAgainst: 1, lastError: reason });
    expect(afterFirst?.escalation).toBeUndefined();
    expect(afterFirst?.lastReconcileRoundAt).toBe('2026-12-01T10:00:00.001Z');
    advance(leaseMs); // the next round counts a lease after the last
    const second = await reconcileShipments(ctx, { maxAttempts: 2, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(second.items).toEqual([expect.objectContaining({ result: 'escalated', reason })]);
    expect(await recordIn(store)).toMatchObject({
      state: 'escalated',
      reconcileAttempts: 2,
      escalation: { reason: `not settled after 2 reconcile rounds; last: ${reason}`, at: '2026-12-01T10:01:00.001Z' },
    });
  });

  it('a round without an answer counts against the transient budget from the first such round, not as a round, and escalates once it is spent', async () => {
    const long = 'x'.repeat(600);
    const carrier = new ScriptedCarrier(
      [down()],
      [new CarrierUnavailableError(long), new CarrierUnavailableError('down'), new CarrierUnavailableError('still down')],
    );
    const { store, ctx, advance } = setUp(carrier);
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    await releaseLease(ctx, 'o-1', event.key, 'me');
    const options = { maxAttempts: 1, batchSize: 10, transientBudgetMs: 600_000 };
    advance(1);
    expect((await reconcileShipments(ctx, options, { owner: 'r1' })).items).toEqual([expect.objectContaining({ result: 'still-in-progress', reason: long })]);
    const afterFirst = await recordIn(store);
    expect(afterFirst).toMatchObject({ state: 'in-progress', reconcileAttempts: 0, carrierUnreachableSince: '2026-12-01T10:00:00.001Z' });
    expect(afterFirst?.lastError).toHaveLength(500);
    advance(599_999); // the budget's last instant
    expect((await reconcileShipments(ctx, options, { owner: 'r2' })).items).toEqual([expect.objectContaining({ result: 'still-in-progress', reason: 'down' })]);
    expect(await recordIn(store)).toMatchObject({ state: 'in-progress', carrierUnreachableSince: '2026-12-01T10:00:00.001Z', lastError: 'down' });
    advance(1);
    expect((await reconcileShipments(ctx, options, { owner: 'r3' })).items).toEqual([expect.objectContaining({ result: 'escalated', reason: 'still down' })]);
    expect(await recordIn(store)).toMatchObject({
      state: 'escalated',
      reconcileAttempts: 0,
      escalation: {
        reason: 'the carrier gave no answer for 600 s, the transient retry budget (TRANSIENT_RETRY_BUDGET_SECONDS); last: still down',
        at: '2026-12-01T10:10:00.001Z',
      },
    });
  });

  it('a round that settles an escalated-then-retried record clears its escalation', async () => {
    const carrier = new ScriptedCarrier([down()], [{ kind: 'in-flight' }, booked('SHP-9')]);
    const { store, ctx, advance } = setUp(carrier);
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    await releaseLease(ctx, 'o-1', event.key, 'me');
    advance(1);
    await reconcileShipments(ctx, { maxAttempts: 1, batchSize: 10, transientBudgetMs: day }, { owner: 'r1' });
    const escalated = await store.read<ShipmentRecord>('o-1', shipmentRecordId(event.key));
    const { replace } = await import('../../../src/idempotency/index.js');
    // What `dlq shipments resolve --retry` writes.
    const retried: ShipmentRecord = { ...escalated!.document, state: 'in-progress', reconcileAttempts: 0 };
    await store.commit('o-1', [replace(retried, escalated!.etag)]);
    advance(1);
    const run = await reconcileShipments(ctx, { maxAttempts: 1, batchSize: 10, transientBudgetMs: day }, { owner: 'r2' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'completed', shipmentId: 'SHP-9' })]);
    const record = await recordIn(store);
    expect(record).toMatchObject({ state: 'completed', shipmentId: 'SHP-9', answer: { via: 'lookup' } });
    expect(record?.escalation).toBeUndefined();
  });
});

/** A carrier that runs `meanwhile` (another process's write) before it answers. */
class InterleavingCarrier implements CarrierClient {
  readonly calls: string[] = [];
  constructor(
    private readonly answers: { book?: BookingAnswer; lookup?: LookupAnswer | Error },
    private readonly meanwhile: () => Promise<void>,
  ) {}
  async book(): Promise<BookingAnswer> {
    this.calls.push('book');
    await this.meanwhile();
    return this.answers.book ?? booked('SHP-X');
  }
  async lookup(): Promise<LookupAnswer> {
    this.calls.push('lookup');
    await this.meanwhile();
    const answer = this.answers.lookup ?? { kind: 'not-found' };
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

/** Another owner takes the record over (or settles it) while this caller waits on the carrier. */
async function changeRecord(store: DocumentStore, change: Partial<ShipmentRecord>): Promise<void> {
  const { replace } = await import('../../../src/idempotency/index.js');
  const current = await store.read<ShipmentRecord>('o-1', shipmentRecordId(event.key));
  const next: ShipmentRecord = { ...current!.document, ...change };
  await store.commit('o-1', [replace(next, current!.etag)]);
}

describe('writes that lost to another owner', () => {
  const takenByOther = { owner: 'other', attempt: 2, leaseExpiresAt: '2026-12-01T11:00:00.000Z' };

  it('a booking answer that comes after a takeover is not written: the caller reads again and waits for the new owner', async () => {
    const late: { store?: DocumentStore } = {};
    const carrier = new InterleavingCarrier({ book: booked('SHP-LATE') }, () => changeRecord(late.store!, takenByOther));
    const env = setUp(carrier);
    const store = (late.store = env.store);
    await storeOrder(store);
    const result = await bookShipmentOnce(event, env.ctx, { owner: 'me' });
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: 'another consumer (other) holds the booking until 2026-12-01T11:00:00.000Z' });
    expect(await recordIn(store)).toMatchObject({ state: 'in-progress', owner: 'other', attempt: 2 });
    expect((await orderIn(store))?.shipmentId).toBeUndefined();
    expect(carrier.calls).toEqual(['book']);
  });

  it('a refusal that comes after a takeover is not written either', async () => {
    const late: { store?: DocumentStore } = {};
    const carrier = new InterleavingCarrier({ book: { kind: 'refused', answer: { status: 400, body: {} }, reason: 'no' } }, () =>
      changeRecord(late.store!, takenByOther),
    );
    const env = setUp(carrier);
    const store = (late.store = env.store);
    await storeOrder(store);
    expect((await bookShipmentOnce(event, env.ctx, { owner: 'me' })).outcome).toMatchObject({
      kind: 'retry',
      reason: 'another consumer (other) holds the booking until 2026-12-01T11:00:00.000Z',
    });
    expect(await recordIn(store)).toMatchObject({ state: 'in-progress', owner: 'other' });
  });

  it('a takeover that loses to another takeover calls nobody', async () => {
    const first = setUp(new ScriptedCarrier([down()]));
    await storeOrder(first.store);
    await bookShipmentOnce(event, first.ctx, { owner: 'dead' });
    first.advance(leaseMs);
    const carrier = new InterleavingCarrier({ lookup: { kind: 'not-found' } }, () => changeRecord(first.store, takenByOther));
    const result = await bookShipmentOnce(event, { ...first.ctx, carrier }, { owner: 'me' });
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('another consumer (other)') });
    expect(carrier.calls).toEqual(['lookup']);
  });

  it('the same owner calling again keeps its attempt: a retry of its own is not a takeover', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([down(), booked('SHP-1')], [{ kind: 'not-found' }]));
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(await bookShipmentOnce(event, ctx, { owner: 'me' })).toMatchObject({ outcome: { kind: 'created' }, shipmentId: 'SHP-1' });
    expect(await recordIn(store)).toMatchObject({ owner: 'me', attempt: 1 });
  });

  it('a completed record is a duplicate with its shipment id, known from the record', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([booked('SHP-1')]));
    await storeOrder(store);
    await bookShipmentOnce(event, ctx, { owner: 'me' });
    expect(await bookShipmentOnce(event, ctx, { owner: 'you' })).toEqual({ outcome: { kind: 'duplicate' }, shipmentId: 'SHP-1', via: 'record' });
  });

  it('an order that keeps changing is read again each round, up to the limit, then handed back', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([booked('SHP-1')]));
    await storeOrder(store);
    let batches = 0;
    const churning: DocumentStore = {
      read: (pk, id) => store.read(pk, id),
      find: (q) => store.find(q),
      commit: async (pk, ops) => {
        if (ops.length === 2) {
          batches += 1;
          // A payment lands between this round's read of the order and its batch.
          const { replace } = await import('../../../src/idempotency/index.js');
          const order = await store.read<OrderDocument>('o-1', 'o-1');
          const paid: OrderDocument = { ...order!.document, paymentCount: order!.document.paymentCount + 1 };
          await store.commit('o-1', [replace(paid, order!.etag)]);
        }
        return store.commit(pk, ops);
      },
    };
    const result = await bookShipmentOnce(event, { ...ctx, store: churning }, { owner: 'me' });
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: 'order o-1 kept changing while its shipment was recorded' });
    expect(batches).toBe(3);
    expect(await recordIn(store)).toMatchObject({ state: 'in-progress' });
  });

  it('a carrier client that fails in a way it does not name (a bug, not an outage) is not taken for an outage', async () => {
    const { store, ctx } = setUp(new ScriptedCarrier([new TypeError('undefined is not a function')]));
    await storeOrder(store);
    await expect(bookShipmentOnce(event, ctx, { owner: 'me' })).rejects.toThrow(TypeError);
  });
});

describe('the reconciler, interleaved', () => {
  it('a record another owner takes over first is reported taken, not called', async () => {
    const first = setUp(new ScriptedCarrier([down()]));
    await storeOrder(first.store);
    await bookShipmentOnce(event, first.ctx, { owner: 'dead' });
    first.advance(leaseMs + 1);
    const carrier = new InterleavingCarrier({ lookup: { kind: 'not-found' } }, () =>
      changeRecord(first.store, { owner: 'other', leaseExpiresAt: '2026-12-01T11:00:00.000Z' }),
    );
    const run = await reconcileShipments({ ...first.ctx, carrier }, { maxAttempts: 3, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([{ id: 'shipment|src%7Cevt-1', orderId: 'o-1', result: 'taken-by-another' }]);
    expect(carrier.calls).toEqual(['lookup']);
  });

  it('a record settled by someone else during a failed round is not counted against', async () => {
    const first = setUp(new ScriptedCarrier([down()]));
    await storeOrder(first.store);
    await bookShipmentOnce(event, first.ctx, { owner: 'dead' });
    first.advance(leaseMs + 1);
    const carrier = new InterleavingCarrier({ lookup: new CarrierUnavailableError('down') }, () =>
      changeRecord(first.store, { state: 'completed', shipmentId: 'SHP-BY-OTHER' }),
    );
    const run = await reconcileShipments({ ...first.ctx, carrier }, { maxAttempts: 3, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([{ id: 'shipment|src%7Cevt-1', orderId: 'o-1', result: 'taken-by-another' }]);
    expect(await recordIn(first.store)).toMatchObject({ state: 'completed', reconcileAttempts: 0 });
  });

  it('a round in which the reconciler took the lease over itself and then got no answer still counts against the budget: an outage of bookings has an end', async () => {
    const first = setUp(new ScriptedCarrier([down()]));
    await storeOrder(first.store);
    await bookShipmentOnce(event, first.ctx, { owner: 'dead' });
    first.advance(leaseMs + 1);
    const carrier = new ScriptedCarrier([down()], [{ kind: 'not-found' }]);
    const run = await reconcileShipments({ ...first.ctx, carrier }, { maxAttempts: 3, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'still-in-progress', reason: 'the carrier answered 503' })]);
    expect(carrier.calls).toEqual(['lookup', 'book']);
    expect(await recordIn(first.store)).toMatchObject({
      state: 'in-progress',
      owner: 'reconciler',
      attempt: 2,
      reconcileAttempts: 0,
      carrierUnreachableSince: '2026-12-01T10:01:00.001Z',
    });
  });

  it('a booking in hand is recorded over an escalation written while the carrier was called (by a reconciler of the previous release)', async () => {
    const late: { store?: DocumentStore } = {};
    const escalation = {
      state: 'escalated' as const,
      reconcileAttempts: 5,
      escalation: { reason: 'not settled after 5 reconcile rounds', at: '2026-12-01T10:00:00.000Z' },
    };
    const carrier = new InterleavingCarrier({ book: booked('SHP-MINE') }, () => changeRecord(late.store!, escalation));
    const env = setUp(carrier);
    const store = (late.store = env.store);
    await storeOrder(store);
    const result = await bookShipmentOnce(event, env.ctx, { owner: 'me' });
    expect(result).toEqual({ outcome: { kind: 'created' }, shipmentId: 'SHP-MINE', via: 'booking' });
    const record = await recordIn(store);
    expect(record).toMatchObject({ state: 'completed', shipmentId: 'SHP-MINE', owner: 'me' });
    expect(record?.escalation).toBeUndefined();
    expect((await orderIn(store))?.shipmentId).toBe('SHP-MINE');
  });

  it('a refusal in hand is not written over an escalation: the operator decides', async () => {
    const late: { store?: DocumentStore } = {};
    const refusal: BookingAnswer = { kind: 'refused', answer: { status: 422, body: {} }, reason: 'the carrier answered 422' };
    const carrier = new InterleavingCarrier({ book: refusal }, () => changeRecord(late.store!, { state: 'escalated' }));
    const env = setUp(carrier);
    const store = (late.store = env.store);
    await storeOrder(store);
    const result = await bookShipmentOnce(event, env.ctx, { owner: 'me' });
    expect(result.outcome).toMatchObject({ kind: 'invalid', error: { code: 'ShipmentEscalated' } });
    expect(await recordIn(store)).toMatchObject({ state: 'escalated' });
  });

  it('a refusal found by the look-up is recorded, and reported refused with its reason', async () => {
    const first = setUp(new ScriptedCarrier([down()]));
    await storeOrder(first.store);
    await bookShipmentOnce(event, first.ctx, { owner: 'dead' });
    first.advance(leaseMs + 1);
    const carrier = new ScriptedCarrier([], [{ kind: 'refused', answer: { status: 422, body: {} }, reason: 'the carrier answered 422' }]);
    const run = await reconcileShipments({ ...first.ctx, carrier }, { maxAttempts: 3, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([
      { id: 'shipment|src%7Cevt-1', orderId: 'o-1', result: 'refused', reason: 'the carrier refused the shipment for order o-1: the carrier answered 422' },
    ]);
    expect(await recordIn(first.store)).toMatchObject({ state: 'refused' });
  });
});

describe('what the store answers besides committed', () => {
  const recordId = shipmentRecordId(event.key);
  const isRecord = (_pk: string, id: string) => id === recordId;
  const deleted = { kind: 'not-found', operationIndex: 0 } as const;

  function answering(carrier: CarrierClient, maxConcurrencyAttempts = 3) {
    const env = setUp(carrier);
    const store = new AnsweringStore(env.store);
    return { ...env, store, memory: env.store, ctx: { ...env.ctx, store, maxConcurrencyAttempts } };
  }

  /** A record another owner left in progress, its lease run out: the next caller looks it up first. */
  async function abandonedRecord(t: ReturnType<typeof answering>): Promise<void> {
    await bookShipmentOnce(event, { ...t.ctx, carrier: new ScriptedCarrier([down()]) }, { owner: 'dead' });
    t.advance(leaseMs);
  }

  it('books in one round when one round is all it may take', async () => {
    const t = answering(new ScriptedCarrier([booked('SHP-1')]), 1);
    await storeOrder(t.memory);
    expect(await bookShipmentOnce(event, t.ctx, { owner: 'me' })).toMatchObject({ outcome: { kind: 'created' }, shipmentId: 'SHP-1' });
  });

  it('every round losing its create to a record gone by the time it is read: a retry after exactly the rounds allowed, nobody called', async () => {
    const carrier = new ScriptedCarrier([]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    t.store.answerCommit(firstIs('create', 'shipment'), { kind: 'already-exists', operationIndex: 0 }, 10);
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'me' })).outcome).toEqual({
      kind: 'retry',
      reason: 'the shipment record kept changing: 3 rounds lost',
    });
    expect([t.store.answered, carrier.calls]).toEqual([3, []]);
  });

  /** The store as the booking calls it, each call noted: the round trips a path costs. */
  function recorded(store: DocumentStore): { store: DocumentStore; calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      store: {
        read: (pk, id) => (calls.push(`read ${id}`), store.read(pk, id)),
        commit: (pk, operations) => (calls.push(operations.map((o) => `${o.kind} ${o.document.id}`).join(', ')), store.commit(pk, operations)),
        find: (query) => store.find(query),
      },
    };
  }

  it("a record gone between its create's 409 and the read is created again at once, with no read between, and booked", async () => {
    const carrier = new ScriptedCarrier([booked('SHP-1')]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    t.store.answerCommit(firstIs('create', 'shipment'), { kind: 'already-exists', operationIndex: 0 });
    const { store, calls } = recorded(t.store);
    expect(await bookShipmentOnce(event, { ...t.ctx, store }, { owner: 'me' })).toMatchObject({ outcome: { kind: 'created' }, shipmentId: 'SHP-1' });
    expect(calls.slice(0, 5)).toEqual([`read ${recordId}`, `create ${recordId}`, `read ${recordId}`, `create ${recordId}`, `read ${recordId}`]);
    expect(carrier.calls).toEqual(['book']);
  });

  it('a takeover that loses its race reads the record again in the next round, and never tries to create it', async () => {
    const carrier = new ScriptedCarrier([booked('SHP-1')], [{ kind: 'not-found' }, { kind: 'not-found' }]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    await abandonedRecord(t);
    t.store.answerCommit(firstIs('replace', 'shipment'), { kind: 'lost-race', operationIndex: 0 });
    const { store, calls } = recorded(t.store);
    expect(await bookShipmentOnce(event, { ...t.ctx, store }, { owner: 'me' })).toMatchObject({ outcome: { kind: 'created' }, shipmentId: 'SHP-1' });
    expect(calls.slice(0, 4)).toEqual([`read ${recordId}`, `replace ${recordId}`, `read ${recordId}`, `replace ${recordId}`]);
    expect(calls.filter((call) => call.startsWith('create'))).toEqual([]);
    expect(carrier.calls).toEqual(['lookup', 'lookup', 'book']);
  });

  it('a record gone right after its create (deleted by hand) is a retry before anyone is called', async () => {
    const carrier = new ScriptedCarrier([]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    t.store.emptyRead(isRecord, 1, 1);
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'me' })).outcome).toEqual({
      kind: 'retry',
      reason: 'the shipment record just created cannot be read back',
    });
    expect(carrier.calls).toEqual([]);
  });

  it('an escalated record without a reason, or a refused one without its reason, still says what it is', async () => {
    const t = answering(new ScriptedCarrier([]));
    await storeOrder(t.memory);
    await abandonedRecord(t);
    const stored = await t.memory.read<ShipmentRecord>('o-1', recordId);
    const { replace } = await import('../../../src/idempotency/index.js');
    const escalating: ShipmentRecord = { ...stored!.document, state: 'escalated' };
    await t.memory.commit('o-1', [replace(escalating, stored!.etag)]);
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'me' })).outcome).toMatchObject({
      kind: 'invalid',
      error: {
        code: 'ShipmentEscalated',
        description: 'the booking under this key was escalated (unresolved); resolve it with: npm run dlq -- shipments resolve o-1',
      },
    });
    const escalated = await t.memory.read<ShipmentRecord>('o-1', recordId);
    const refusing: ShipmentRecord = { ...escalated!.document, state: 'refused' };
    await t.memory.commit('o-1', [replace(refusing, escalated!.etag)]);
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'me' })).outcome).toMatchObject({
      kind: 'invalid',
      error: { code: 'CarrierRefused', description: 'the carrier refused the shipment for order o-1: no reason given' },
    });
  });

  it('a takeover of a record deleted meanwhile is a retry, and nobody is called', async () => {
    const carrier = new ScriptedCarrier([], [{ kind: 'not-found' }]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    await abandonedRecord(t);
    t.store.answerCommit(firstIs('replace', 'shipment'), deleted);
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'me' })).outcome).toEqual({ kind: 'retry', reason: 'taking the shipment lease over: not-found' });
    expect(carrier.calls).toEqual(['lookup']);
  });

  it('a record gone right after the takeover is a retry, and nobody is called', async () => {
    const carrier = new ScriptedCarrier([], [{ kind: 'not-found' }]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    await abandonedRecord(t);
    t.store.emptyRead(isRecord, 1, 1);
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'me' })).outcome).toEqual({
      kind: 'retry',
      reason: 'the shipment record cannot be read back after the takeover',
    });
    expect(carrier.calls).toEqual(['lookup']);
  });

  it('a refusal or a booking on a record deleted meanwhile is a retry naming the write', async () => {
    const refusing = answering(new ScriptedCarrier([{ kind: 'refused', answer: { status: 400, body: {} }, reason: 'no' }]));
    await storeOrder(refusing.memory);
    refusing.store.answerCommit(firstIs('replace', 'shipment'), deleted);
    expect((await bookShipmentOnce(event, refusing.ctx, { owner: 'me' })).outcome).toEqual({
      kind: 'retry',
      reason: "recording the carrier's refusal: not-found",
    });
    const booking = answering(new ScriptedCarrier([booked('SHP-1')]));
    await storeOrder(booking.memory);
    booking.store.answerCommit(firstIs('replace', 'shipment'), deleted);
    expect((await bookShipmentOnce(event, booking.ctx, { owner: 'me' })).outcome).toEqual({ kind: 'retry', reason: 'recording the booking: not-found' });
  });

  it('an order changed once between its read and the batch is read again, and the booking recorded with one call', async () => {
    const carrier = new ScriptedCarrier([booked('SHP-1')]);
    const t = answering(carrier);
    await storeOrder(t.memory);
    t.store.answerCommit((_pk, operations) => operations.length === 2, { kind: 'lost-race', operationIndex: 1 });
    expect(await bookShipmentOnce(event, t.ctx, { owner: 'me' })).toEqual({ outcome: { kind: 'created' }, shipmentId: 'SHP-1', via: 'booking' });
    expect([carrier.calls, (await orderIn(t.memory))?.shipmentId]).toEqual([['book'], 'SHP-1']);
  });
});
