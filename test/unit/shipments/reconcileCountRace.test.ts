import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { resolveShipment } from '../../../src/cli/shipmentCommands.js';
import { CarrierUnavailableError, bookShipmentOnce, reconcileShipments, shipmentRecordId } from '../../../src/shipments/index.js';
import type { CarrierClient, LookupAnswer, ShipmentContext, ShipmentEvent, ShipmentRecord } from '../../../src/shipments/index.js';
import { InterleavingStore } from '../../support/interleavingStore.js';

// The reconciler counts a round that did not settle a record in one write guarded by the etag it
// re-read: another writer between that read and the write (an operator's `shipments resolve`) makes
// the count lose, and the record, now theirs, is reported taken, neither counted nor escalated.
const leaseMs = 60_000;
const options = { maxAttempts: 1, batchSize: 10, transientBudgetMs: 86_400_000 };
const event: ShipmentEvent = {
  key: 'src|evt-1',
  messageId: 'evt-1',
  orderId: 'o-1',
  request: { orderReference: 'o-1', customerId: 'c-1', declaredValue: 20, currency: 'EUR' },
  fingerprint: 'fp-1',
};

/** A carrier that answers every look-up with `lookup` and every booking with no answer at all. */
const carrier = (lookup: LookupAnswer): CarrierClient => ({
  lookup: async () => lookup,
  book: async () => {
    throw new CarrierUnavailableError('no answer');
  },
});

const countsShipment = (_pk: string, operations: readonly WriteOperation[]) =>
  operations.some((op) => op.kind === 'replace' && (op.document as { docType?: string }).docType === 'shipment');

describe('a reconcile round whose count loses to another writer', () => {
  it('an operator requeues the record between the count’s read and its write: the item is taken-by-another, the round not counted', async () => {
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const memory = new InMemoryDocumentStore(() => now);
    const store = new InterleavingStore(memory);
    const ctx = (client: CarrierClient): ShipmentContext => ({ store, carrier: client, now: () => new Date(now), leaseMs, maxConcurrencyAttempts: 3 });
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
    await memory.commit('o-1', [create(order)]);
    // The first owner called the carrier, got no answer and died: its lease runs out.
    expect((await bookShipmentOnce(event, ctx(carrier({ kind: 'not-found' })), { owner: 'dead' })).outcome.kind).toBe('retry');
    now += leaseMs + 1;

    store.beforeCommit(countsShipment, async () =>
      expect((await resolveShipment({ store: memory, now: () => now }, 'o-1', { kind: 'retry' }, false)).outcome).toBe('requeued'),
    );
    // The carrier is still handling the key: a round without an outcome, the last one allowed.
    const run = await reconcileShipments(ctx(carrier({ kind: 'in-flight' })), options, { owner: 'reconciler/1' });

    const id = shipmentRecordId(event.key);
    expect(run).toEqual({ examined: 1, items: [{ id, orderId: 'o-1', result: 'taken-by-another' }] });
    const record = (await memory.read<ShipmentRecord>('o-1', id))?.document;
    expect(record).toMatchObject({ state: 'in-progress', owner: 'operator', reconcileAttempts: 0 });
    expect(record?.escalation).toBeUndefined();
  });
});
