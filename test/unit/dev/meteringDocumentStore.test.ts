import { describe, expect, it } from 'vitest';
import { MeteringDocumentStore } from '../../../dev/store/meteringDocumentStore.js';
import { bodyBytes, requestUnitsOf } from '../../../dev/store/requestUnitModel.js';
import { InMemoryDocumentStore, create, replace } from '../../../src/idempotency/index.js';

describe('MeteringDocumentStore', () => {
  const gate = { id: 'gate', orderId: 'o', docType: 'parking-lot', state: 'open' };
  const order = { id: 'o', orderId: 'o', docType: 'order', dedupKey: 'm-o' };

  it('counts what a committed batch wrote and what reads returned, with their bytes, and nothing of a failed batch', async () => {
    const store = new MeteringDocumentStore(new InMemoryDocumentStore());
    await store.commit('o', [create(gate), create(order)]);
    expect(await store.commit('o', [create({ ...gate, id: 'other' }), create(order)])).toMatchObject({ kind: 'already-exists', operationIndex: 1 });
    await store.read('o', 'gate');
    await store.read('o', 'missing');
    expect(await store.find({ docType: 'order', partitionKey: 'o' })).toHaveLength(1);
    expect(store.totals).toMatchObject({
      trips: 5,
      documentsWritten: 2,
      bytesWritten: bodyBytes(gate) + bodyBytes(order),
      documentsRead: 2,
      bytesRead: bodyBytes(gate) + bodyBytes(order),
    });
  });

  it('prices each call by the model, a replace against the version it read since the last reset', async () => {
    const store = new MeteringDocumentStore(new InMemoryDocumentStore());
    await store.commit('o', [create(gate)]);
    store.reset();
    const seen = await store.read<typeof gate>('o', 'gate');
    const closed = { ...gate, state: 'closed' };
    await store.commit('o', [replace(closed, seen!.etag)]);
    expect(store.totals.trips).toBe(2);
    // A point read (1) and a replace changing `state` and `_ts` (10.8, Microsoft's worked example).
    expect(store.totals.modelRequestUnits).toBeCloseTo(11.8, 5);
  });

  it('prices a replace of a version it has not seen since the last reset as changing every indexed term', async () => {
    const store = new MeteringDocumentStore(new InMemoryDocumentStore());
    await store.commit('o', [create(gate)]);
    const seen = await store.read<typeof gate>('o', 'gate');
    store.reset();
    const closed = { ...gate, state: 'closed' };
    await store.commit('o', [replace(closed, seen!.etag)]);
    expect(store.totals.modelRequestUnits).toBeCloseTo(
      requestUnitsOf({ kind: 'commit', writes: [{ kind: 'replace', document: closed, previous: undefined }], failedAt: undefined }),
      5,
    );
  });
});
