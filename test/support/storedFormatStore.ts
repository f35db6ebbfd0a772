import { InMemoryDocumentStore, TransientStoreError, create } from '../../src/idempotency/index.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';
import type { BookingAnswer, BookingRequest, CarrierClient, LookupAnswer } from '../../src/shipments/index.js';
import type { CarrierBooking, CarrierCalls, FixtureDocument, StoreChanges } from './storedFormatFixture.js';

/**
 * The reference in-memory store, remembering every partition written to, so that everything in it
 * can be listed: what a fixture captures, and what a replay compares before and after.
 */
export class FixtureStore implements DocumentStore {
  readonly memory: InMemoryDocumentStore;
  private readonly partitions = new Set<string>();
  private crashWhen?: (operations: readonly WriteOperation[]) => boolean;
  private dead = false;

  constructor(now: () => number) {
    this.memory = new InMemoryDocumentStore(now);
  }

  /** A store holding exactly these documents, as a release left them. */
  static async holding(documents: readonly FixtureDocument[], now: () => number): Promise<FixtureStore> {
    const store = new FixtureStore(now);
    for (const { partitionKey, document } of documents) {
      const result = await store.commit(partitionKey, [create(document as unknown as StoredDocument)]);
      if (result.kind !== 'committed') throw new Error(`fixture document ${partitionKey}/${String(document.id)}: ${result.kind}`);
    }
    return store;
  }

  /**
   * The process using the store dies (as far as the store can tell) before the next commit that
   * `when` picks: that commit and every call after it fail, until `revive`. A flow sees a transient error.
   */
  crashBefore(when: (operations: readonly WriteOperation[]) => boolean): void {
    this.crashWhen = when;
  }

  revive(): void {
    this.dead = false;
    this.crashWhen = undefined;
  }

  read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    if (this.dead) return Promise.reject(new TransientStoreError('the process is dead (crash point)'));
    return this.memory.read<D>(partitionKey, id);
  }

  commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (!this.dead && this.crashWhen?.(operations)) this.dead = true;
    if (this.dead) return Promise.reject(new TransientStoreError('the process is dead (crash point)'));
    this.partitions.add(partitionKey);
    return this.memory.commit(partitionKey, operations);
  }

  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    if (this.dead) return Promise.reject(new TransientStoreError('the process is dead (crash point)'));
    return this.memory.find<D>(query);
  }

  /** Every live document, by partition then id: the order a fixture lists them in. */
  documents(): FixtureDocument[] {
    return [...this.partitions].sort().flatMap((partitionKey) =>
      this.memory
        .list(partitionKey)
        .map((document) => ({ partitionKey, document: document as unknown as Record<string, unknown> }))
        .sort((a, b) => compareText(String(a.document.id), String(b.document.id))),
    );
  }
}

/** Fields that carry a document's effect: what a replay reports of each document it created or changed. */
const effectFields = ['state', 'amountPaid', 'paymentCount', 'status', 'statusVersion', 'shipmentId', 'appliedAs'] as const;

/** What changed between two listings of a store. */
export function storeChanges(before: readonly FixtureDocument[], after: readonly FixtureDocument[]): StoreChanges {
  const key = (d: FixtureDocument) => `${d.partitionKey}/${String(d.document.id)}`;
  const was = new Map(before.map((d) => [key(d), JSON.stringify(d.document)]));
  const now = new Map(after.map((d) => [key(d), d]));
  const created = [...now.keys()].filter((k) => !was.has(k)).sort(compareText);
  const changed = [...now.keys()].filter((k) => was.has(k) && was.get(k) !== JSON.stringify(now.get(k)?.document)).sort(compareText);
  const removed = [...was.keys()].filter((k) => !now.has(k)).sort(compareText);
  const effects = Object.fromEntries([...created, ...changed].map((k) => [k, effectOf(now.get(k)?.document ?? {})]));
  return { created, changed, removed, effects };
}

function effectOf(document: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(effectFields.filter((field) => document[field] !== undefined).map((field) => [field, document[field]]));
}

/** Code-unit order, the same on every machine and locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A carrier that honours its Idempotency-Key as a real one does: a second booking under a key
 * answers the first, a look-up finds it. Counts the calls, so a replay can tell a second booking.
 */
export class KeyedCarrier implements CarrierClient {
  readonly calls = { book: 0, lookup: 0 };
  private readonly bookings = new Map<string, CarrierBooking>();

  constructor(bookings: readonly CarrierBooking[] = []) {
    for (const booking of bookings) this.bookings.set(booking.idempotencyKey, booking);
  }

  async book(request: BookingRequest): Promise<BookingAnswer> {
    this.calls.book += 1;
    let booking = this.bookings.get(request.idempotencyKey);
    if (!booking) {
      const shipmentId = `shp-${String(this.bookings.size + 1).padStart(4, '0')}`;
      booking = {
        idempotencyKey: request.idempotencyKey,
        shipmentId,
        answer: { status: 201, body: { shipmentId, orderReference: request.shipment.orderReference } },
      };
      this.bookings.set(request.idempotencyKey, booking);
    }
    return { kind: 'booked', shipmentId: booking.shipmentId, answer: booking.answer };
  }

  async lookup(idempotencyKey: string): Promise<LookupAnswer> {
    this.calls.lookup += 1;
    const booking = this.bookings.get(idempotencyKey);
    return booking ? { kind: 'booked', shipmentId: booking.shipmentId, answer: { status: 200, body: booking.answer.body } } : { kind: 'not-found' };
  }

  held(): CarrierBooking[] {
    return [...this.bookings.values()].sort((a, b) => compareText(a.idempotencyKey, b.idempotencyKey));
  }

  callsSince(before: CarrierCalls): CarrierCalls {
    return { book: this.calls.book - before.book, lookup: this.calls.lookup - before.lookup };
  }
}
