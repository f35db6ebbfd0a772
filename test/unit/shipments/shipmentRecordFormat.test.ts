import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import { CarrierUnavailableError, bookShipmentOnce, reconcileShipments, shipmentRecordId } from '../../../src/shipments/index.js';
import type { BookingAnswer, CarrierClient, LookupAnswer, ShipmentEvent, ShipmentRecord } from '../../../src/shipments/index.js';

// Records written by the previous release have neither `reconcileAttemptsAgainst` nor
// `carrierUnreachableSince`: the new code reads them as they are.
const day = 86_400_000;

/**
 * A record exactly as the previous release stored it (b467f43): created in progress, then its owner
 * handed the event back (lease ended) and one reconcile round was counted against it.
 */
const previousRelease = {
  id: 'shipment|src%7Cevt-1',
  orderId: 'o-1',
  docType: 'shipment',
  idempotencyKey: 'src|evt-1',
  messageId: 'evt-1',
  request: { orderReference: 'o-1', customerId: 'c-1', declaredValue: 20, currency: 'EUR' },
  requestFingerprint: 'fp-1',
  state: 'in-progress',
  owner: 'fulfilment/first',
  attempt: 1,
  leaseExpiresAt: '2026-12-01T10:00:00.000Z',
  reconcileAttempts: 1,
  startedAt: '2026-12-01T09:59:00.000Z',
  updatedAt: '2026-12-01T10:02:00.000Z',
  lastError: 'the carrier is still handling an earlier request under this key',
};

const event: ShipmentEvent = { key: 'src|evt-1', messageId: 'evt-1', orderId: 'o-1', request: previousRelease.request, fingerprint: 'fp-1' };

class Carrier implements CarrierClient {
  constructor(
    private readonly lookups: (LookupAnswer | Error)[],
    private readonly bookings: (BookingAnswer | Error)[] = [],
  ) {}
  async book(): Promise<BookingAnswer> {
    const next = this.bookings.shift() ?? new Error('no booking scripted');
    if (next instanceof Error) throw next;
    return next;
  }
  async lookup(): Promise<LookupAnswer> {
    const next = this.lookups.shift() ?? new Error('no look-up scripted');
    if (next instanceof Error) throw next;
    return next;
  }
}

async function withPreviousRecord(carrier: CarrierClient, record: object = previousRelease) {
  const now = Date.parse('2026-12-01T10:04:00.000Z');
  const store: DocumentStore = new InMemoryDocumentStore(() => now);
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
  };
  await store.commit('o-1', [create(order), create(record as ShipmentRecord)]);
  const ctx = { store, carrier, now: () => new Date(now), leaseMs: 60_000, maxConcurrencyAttempts: 3 };
  return { store, ctx, record: async () => (await store.read<ShipmentRecord>('o-1', shipmentRecordId(event.key)))?.document };
}

describe('a shipment record written by the previous release', () => {
  it('keeps its rounds: one more round the carrier answers without an outcome reaches the limit', async () => {
    const t = await withPreviousRecord(new Carrier([{ kind: 'in-flight' }]));
    const run = await reconcileShipments(t.ctx, { maxAttempts: 2, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'escalated' })]);
    expect(await t.record()).toMatchObject({ state: 'escalated', reconcileAttempts: 2, reconcileAttemptsAgainst: 1 });
  });

  it('a round without an answer starts the transient budget and leaves its rounds as they were', async () => {
    const t = await withPreviousRecord(new Carrier([new CarrierUnavailableError('the carrier answered 503', 503)]));
    const run = await reconcileShipments(t.ctx, { maxAttempts: 2, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'still-in-progress' })]);
    expect(await t.record()).toMatchObject({
      state: 'in-progress',
      reconcileAttempts: 1,
      carrierUnreachableSince: '2026-12-01T10:04:00.000Z',
      lastError: 'the carrier answered 503',
    });
  });

  it('a takeover by a consumer of this release starts the rounds again', async () => {
    const t = await withPreviousRecord(new Carrier([{ kind: 'not-found' }], [new CarrierUnavailableError('the carrier answered 503', 503)]));
    expect((await bookShipmentOnce(event, t.ctx, { owner: 'fulfilment/second' })).outcome.kind).toBe('retry');
    expect(await t.record()).toMatchObject({ owner: 'fulfilment/second', attempt: 2, reconcileAttempts: 0, reconcileAttemptsAgainst: 2 });
  });

  it('a takeover by a consumer of the previous release (attempt moved on, rounds kept) does not carry the rounds over, once this release has counted one', async () => {
    const counted = { ...previousRelease, reconcileAttemptsAgainst: 1 };
    // What the previous release's takeover writes: a new owner and attempt, the rounds left as they were.
    const takenByOldCode = { ...counted, owner: 'fulfilment/old', attempt: 2, leaseExpiresAt: '2026-12-01T10:03:00.000Z' };
    const t = await withPreviousRecord(new Carrier([{ kind: 'in-flight' }]), takenByOldCode);
    const run = await reconcileShipments(t.ctx, { maxAttempts: 2, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'still-in-progress' })]);
    expect(await t.record()).toMatchObject({ state: 'in-progress', reconcileAttempts: 1, reconcileAttemptsAgainst: 2 });
  });

  it('settles as before once the carrier answers', async () => {
    const answer: LookupAnswer = { kind: 'booked', shipmentId: 'SHP-1', answer: { status: 201, body: { shipmentId: 'SHP-1' } } };
    const t = await withPreviousRecord(new Carrier([answer]));
    const run = await reconcileShipments(t.ctx, { maxAttempts: 2, batchSize: 10, transientBudgetMs: day }, { owner: 'reconciler' });
    expect(run.items).toEqual([expect.objectContaining({ result: 'completed', shipmentId: 'SHP-1' })]);
    const order = await t.store.read<{ id: string; docType: string; shipmentId?: string }>('o-1', 'o-1');
    expect(order?.document.shipmentId).toBe('SHP-1');
  });
});
