import { randomUUID } from 'node:crypto';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CosmosDocumentStore } from '../../src/cosmos/index.js';
import { InMemoryDocumentStore, create, replace } from '../../src/idempotency/index.js';
import type { DocumentStore } from '../../src/idempotency/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';

let client: CosmosClient;
let cosmosStore: CosmosDocumentStore;

beforeAll(async () => {
  client = testCosmosClient();
  cosmosStore = new CosmosDocumentStore(await createOrdersContainer(client));
});
afterAll(() => client.dispose());

const doc = (orderId: string, id: string, extra: Record<string, unknown> = {}) => ({ id, orderId, ...extra });

// The same behaviours, asserted against the reference in-memory store and against Cosmos DB through
// the real SDK: the flows are only as correct as the store contract they rely on.
describe.each([
  ['InMemoryDocumentStore', () => new InMemoryDocumentStore() as DocumentStore],
  ['CosmosDocumentStore (real SDK, stand-in)', () => cosmosStore as DocumentStore],
])('%s', (_name, storeOf) => {
  describe('commit', () => {
    it('creates a document that a point read returns with an etag', async () => {
      const store = storeOf();
      const pk = randomUUID();
      expect(await store.commit(pk, [create(doc(pk, 'a', { n: 1 }))])).toEqual({ kind: 'committed' });
      const read = await store.read<{ id: string; n: number }>(pk, 'a');
      expect(read?.document.n).toBe(1);
      expect(read?.etag).toEqual(expect.any(String));
    });

    it('reports already-exists, not an error, when the id is taken in the partition', async () => {
      const store = storeOf();
      const pk = randomUUID();
      await store.commit(pk, [create(doc(pk, 'a'))]);
      expect(await store.commit(pk, [create(doc(pk, 'a', { other: true }))])).toEqual({ kind: 'already-exists', operationIndex: 0 });
    });

    it('allows the same id in another partition', async () => {
      const store = storeOf();
      const [a, b] = [randomUUID(), randomUUID()];
      await store.commit(a, [create(doc(a, 'same'))]);
      expect(await store.commit(b, [create(doc(b, 'same'))])).toEqual({ kind: 'committed' });
    });

    it('lets exactly one of 50 concurrent creates of one id win', async () => {
      const store = storeOf();
      const pk = randomUUID();
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.commit(pk, [create(doc(pk, 'race', { writer: i }))])));
      expect(results.filter((r) => r.kind === 'committed')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'already-exists')).toHaveLength(49);
    });

    it('reports lost-race for a replace with a stale etag, and not-found for a missing document', async () => {
      const store = storeOf();
      const pk = randomUUID();
      await store.commit(pk, [create(doc(pk, 'a', { v: 1 }))]);
      const first = await store.read(pk, 'a');
      expect(await store.commit(pk, [replace(doc(pk, 'a', { v: 2 }), first!.etag)])).toEqual({ kind: 'committed' });
      expect(await store.commit(pk, [replace(doc(pk, 'a', { v: 3 }), first!.etag)])).toEqual({ kind: 'lost-race', operationIndex: 0 });
      expect(await store.commit(pk, [replace(doc(pk, 'missing'), first!.etag)])).toEqual({ kind: 'not-found', operationIndex: 0 });
      expect((await store.read<{ id: string; v: number }>(pk, 'a'))?.document.v).toBe(2);
    });
  });

  describe('commit of several operations', () => {
    it('applies all of them together', async () => {
      const store = storeOf();
      const pk = randomUUID();
      expect(await store.commit(pk, [create(doc(pk, 'a')), create(doc(pk, 'b'))])).toEqual({ kind: 'committed' });
      expect(await store.read(pk, 'a')).toBeDefined();
      expect(await store.read(pk, 'b')).toBeDefined();
    });

    it('leaves nothing written when a later operation fails (atomic)', async () => {
      const store = storeOf();
      const pk = randomUUID();
      await store.commit(pk, [create(doc(pk, 'taken'))]);
      const result = await store.commit(pk, [create(doc(pk, 'fresh')), create(doc(pk, 'taken')), create(doc(pk, 'also-fresh'))]);
      expect(result).toEqual({ kind: 'already-exists', operationIndex: 1 });
      expect(await store.read(pk, 'fresh')).toBeUndefined();
      expect(await store.read(pk, 'also-fresh')).toBeUndefined();
    });

    it('rolls back a create when the replace beside it lost the race', async () => {
      const store = storeOf();
      const pk = randomUUID();
      await store.commit(pk, [create(doc(pk, 'order', { paid: 0 }))]);
      const stale = await store.read(pk, 'order');
      await store.commit(pk, [replace(doc(pk, 'order', { paid: 5 }), stale!.etag)]);
      const result = await store.commit(pk, [create(doc(pk, 'marker')), replace(doc(pk, 'order', { paid: 10 }), stale!.etag)]);
      expect(result).toEqual({ kind: 'lost-race', operationIndex: 1 });
      expect(await store.read(pk, 'marker')).toBeUndefined();
      expect((await store.read<{ id: string; paid: number }>(pk, 'order'))?.document.paid).toBe(5);
    });
  });

  it('reads a missing document as undefined', async () => {
    expect(await storeOf().read(randomUUID(), 'nothing')).toBeUndefined();
  });

  describe('find', () => {
    it('finds by docType and plain fields in one partition, with etags a replace accepts', async () => {
      const store = storeOf();
      const [a, b] = [randomUUID(), randomUUID()];
      await store.commit(a, [
        create(doc(a, 'p1', { docType: 'parked', state: 'parked', at: '2026-01-01' })),
        create(doc(a, 'p2', { docType: 'parked', state: 'applied', at: '2026-01-02' })),
        create(doc(a, 'x', { docType: 'order', state: 'parked' })),
      ]);
      await store.commit(b, [create(doc(b, 'p1', { docType: 'parked', state: 'parked', at: '2026-01-01' }))]);
      const found = await store.find<{ id: string; orderId: string }>({ docType: 'parked', partitionKey: a, equals: { state: 'parked' } });
      expect(found.map((f) => [f.document.orderId, f.document.id])).toEqual([[a, 'p1']]);
      expect(await store.commit(a, [replace(doc(a, 'p1', { docType: 'parked', state: 'applied' }), found[0]?.etag ?? '')])).toEqual({ kind: 'committed' });
    });

    it('fans out across partitions without a partition key, and filters on a field that sorts before a value', async () => {
      const store = storeOf();
      const tag = randomUUID();
      const [a, b] = [randomUUID(), randomUUID()];
      await store.commit(a, [
        create(doc(a, 'old', { docType: 'sweepable', tag, at: '2026-01-01T00:00:00Z' })),
        create(doc(a, 'new', { docType: 'sweepable', tag, at: '2026-03-01T00:00:00Z' })),
      ]);
      await store.commit(b, [create(doc(b, 'old', { docType: 'sweepable', tag, at: '2026-01-05T00:00:00Z' }))]);
      const found = await store.find<{ id: string; orderId: string }>({
        docType: 'sweepable',
        equals: { tag },
        before: { field: 'at', value: '2026-02-01T00:00:00Z' },
      });
      expect(found.map((f) => `${f.document.orderId === a ? 'a' : 'b'}/${f.document.id}`).sort()).toEqual(['a/old', 'b/old']);
    });

    it('returns at most `limit` documents across partitions, and refuses a limit that is not a positive integer', async () => {
      const store = storeOf();
      const tag = randomUUID();
      const partitions = [randomUUID(), randomUUID(), randomUUID()];
      for (const pk of partitions)
        await store.commit(pk, [create(doc(pk, 'a', { docType: 'limited', tag })), create(doc(pk, 'b', { docType: 'limited', tag }))]);
      expect(await store.find({ docType: 'limited', equals: { tag } })).toHaveLength(6);
      expect(await store.find({ docType: 'limited', equals: { tag }, limit: 4 })).toHaveLength(4);
      expect(await store.find({ docType: 'limited', equals: { tag }, limit: 1, partitionKey: partitions[0] })).toHaveLength(1);
      await expect(store.find({ docType: 'limited', limit: 0 })).rejects.toThrow('query limit 0 is not a positive integer');
      await expect(store.find({ docType: 'limited', limit: 2.5 })).rejects.toThrow(RangeError);
    });

    it('pages across partitions oldest first: `orderBy` with `limit`, going on `after` the last one seen', async () => {
      const store = storeOf();
      const tag = randomUUID();
      const ats = ['2026-01-04', '2026-01-01', '2026-01-05', '2026-01-03', '2026-01-02'];
      for (const at of ats) {
        const pk = randomUUID();
        await store.commit(pk, [create(doc(pk, at, { docType: 'paged', tag, at }))]);
      }
      const page = (after?: string) =>
        store.find<{ id: string; at: string }>({
          docType: 'paged',
          equals: { tag },
          orderBy: 'at',
          limit: 2,
          before: { field: 'at', value: '2026-01-05' },
          ...(after ? { after: { field: 'at', value: after } } : {}),
        });
      const first = await page();
      expect(first.map((f) => f.document.at)).toEqual(['2026-01-01', '2026-01-02']);
      const second = await page('2026-01-02');
      expect(second.map((f) => f.document.at)).toEqual(['2026-01-03', '2026-01-04']);
      expect(await page('2026-01-04')).toEqual([]);
      await expect(store.find({ docType: 'paged', orderBy: 'at desc' })).rejects.toThrow('query field "at desc" is not a plain identifier');
      await expect(store.find({ docType: 'paged', after: { field: 'a.b', value: 'y' } })).rejects.toThrow(RangeError);
    });

    it('refuses a field name that is not a plain identifier, before it builds a query', async () => {
      await expect(storeOf().find({ docType: 'x', equals: { 'state = 1 OR 1': 'y' } })).rejects.toThrow(
        'query field "state = 1 OR 1" is not a plain identifier',
      );
      await expect(storeOf().find({ docType: 'x', before: { field: 'a.b', value: 'y' } })).rejects.toThrow(RangeError);
    });
  });
});
