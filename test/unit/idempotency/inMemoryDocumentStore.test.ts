import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create, replace } from '../../../src/idempotency/index.js';

describe('InMemoryDocumentStore', () => {
  it('hides a document once its ttl (seconds) has passed, as Cosmos does', async () => {
    let nowMs = Date.parse('2026-11-30T00:00:00Z');
    const store = new InMemoryDocumentStore(() => nowMs);
    await store.commit('p', [create({ id: 'marker', ttl: 60 } as { id: string })]);
    nowMs += 59_999;
    expect(await store.read('p', 'marker')).toBeDefined();
    nowMs += 1;
    expect(await store.read('p', 'marker')).toBeUndefined();
    expect(await store.commit('p', [create({ id: 'marker' })])).toEqual({ kind: 'committed' });
  });
});

describe('InMemoryDocumentStore, as the yardstick of the store contract', () => {
  it('keeps a document with ttl -1 or no positive ttl for good', async () => {
    let nowMs = 0;
    const store = new InMemoryDocumentStore(() => nowMs);
    await store.commit('p', [create({ id: 'forever', ttl: -1 } as { id: string }), create({ id: 'plain' }), create({ id: 'zero', ttl: 0 } as { id: string })]);
    nowMs += 10 * 365 * 24 * 3600 * 1000;
    expect(
      store
        .list('p')
        .map((d) => d.id)
        .sort(),
    ).toEqual(['forever', 'plain', 'zero']);
  });

  it('hands out copies: changing what was read or committed changes nothing stored', async () => {
    const store = new InMemoryDocumentStore();
    const document = { id: 'd', docType: 'x', n: 1 };
    await store.commit('p', [create(document)]);
    document.n = 2;
    const read = await store.read<{ id: string; n: number }>('p', 'd');
    expect(read?.document.n).toBe(1);
    if (read) read.document.n = 3;
    expect((await store.read<{ id: string; n: number }>('p', 'd'))?.document.n).toBe(1);
    const [found] = await store.find<{ id: string; n: number }>({ docType: 'x', partitionKey: 'p' });
    if (found) found.document.n = 4;
    const [listed] = store.list('p') as { id: string; n: number }[];
    if (listed) listed.n = 5;
    expect((await store.read<{ id: string; n: number }>('p', 'd'))?.document.n).toBe(1);
  });

  it('gives every write a new etag, and a replace with the old one loses', async () => {
    const store = new InMemoryDocumentStore();
    await store.commit('p', [create({ id: 'd' })]);
    const first = await store.read('p', 'd');
    await store.commit('p', [replace({ id: 'd' }, first?.etag ?? '')]);
    const second = await store.read('p', 'd');
    expect(second?.etag).not.toBe(first?.etag);
    expect(await store.commit('p', [replace({ id: 'd' }, first?.etag ?? '')])).toEqual({ kind: 'lost-race', operationIndex: 0 });
    expect(await store.commit('p', [create({ id: 'e' }), replace({ id: 'missing' }, '"1"')])).toEqual({ kind: 'not-found', operationIndex: 1 });
    expect(store.list('p').map((d) => d.id)).toEqual(['d']);
  });

  it('finds across partitions without a partition key, only live documents, at most the limit', async () => {
    let nowMs = 0;
    const store = new InMemoryDocumentStore(() => nowMs);
    await store.commit('a', [create({ id: '1', docType: 'x' } as { id: string }), create({ id: '2', docType: 'x', ttl: 1 } as { id: string })]);
    await store.commit('b', [create({ id: '3', docType: 'x' } as { id: string }), create({ id: '4', docType: 'y' } as { id: string })]);
    nowMs += 1000;
    expect((await store.find({ docType: 'x' })).map((f) => f.document.id).sort()).toEqual(['1', '3']);
    expect(store.list('a').map((d) => d.id)).toEqual(['1']);
    expect((await store.find({ docType: 'x', partitionKey: 'b' })).map((f) => f.document.id)).toEqual(['3']);
    expect(await store.find({ docType: 'x', limit: 1 })).toHaveLength(1);
    expect((await store.find({ docType: 'x' }))[0]?.etag).toMatch(/^"\d+"$/);
  });
});
