import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, classifyRecord, create, createOrClassify, readAndClassify, replace } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../../src/idempotency/index.js';
import { AnsweringStore } from '../../support/answeringStore.js';

interface Marker extends StoredDocument {
  readonly fingerprint: string;
  readonly messageId?: string;
}

interface Account extends StoredDocument {
  readonly balance: number;
}

const marker = (fingerprint: string, id = 'inbox|k'): Marker => ({ id, fingerprint });
const sameAs =
  (fingerprint: string) =>
  (existing: Marker): boolean =>
    existing.fingerprint === fingerprint;

/** Every store call, in order: the round trips a decision costs. */
class CountingStore implements DocumentStore {
  readonly calls: string[] = [];
  constructor(readonly inner: DocumentStore) {}
  read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    this.calls.push(`read ${id}`);
    return this.inner.read<D>(partitionKey, id);
  }
  commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    this.calls.push(`commit ${operations.map((o) => o.document.id).join(',')}`);
    return this.inner.commit(partitionKey, operations);
  }
  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    return this.inner.find<D>(query);
  }
}

function stores(): { memory: InMemoryDocumentStore; answering: AnsweringStore; store: CountingStore } {
  const memory = new InMemoryDocumentStore();
  const answering = new AnsweringStore(memory);
  return { memory, answering, store: new CountingStore(answering) };
}

describe('createOrClassify', () => {
  describe('a single document', () => {
    it('creates it in one round trip when its id is free', async () => {
      const { memory, store } = stores();
      expect(await createOrClassify(store, 'p', marker('f1'), sameAs('f1'))).toEqual({ kind: 'committed' });
      expect(store.calls).toEqual(['commit inbox|k']);
      expect((await memory.read<Marker>('p', 'inbox|k'))?.document).toEqual(marker('f1'));
    });

    it('tells the same request from the record the 409 names, in one read, and hands the record back with its etag', async () => {
      const { memory, store } = stores();
      await memory.commit('p', [create({ ...marker('f1'), messageId: 'm-1' } as Marker)]);
      const stored = await memory.read<Marker>('p', 'inbox|k');
      const result = await createOrClassify(store, 'p', marker('f1'), sameAs('f1'));
      expect(result).toEqual({ kind: 'same-request', existing: { document: { ...marker('f1'), messageId: 'm-1' }, etag: stored?.etag } });
      expect(store.calls).toEqual(['commit inbox|k', 'read inbox|k']);
    });

    it('calls a record of another fingerprint another request, with that record as the evidence, and leaves it as it was', async () => {
      const { memory, store } = stores();
      await memory.commit('p', [create({ ...marker('f1'), messageId: 'm-1' } as Marker)]);
      const result = await createOrClassify(store, 'p', marker('f2'), sameAs('f2'));
      expect(result).toMatchObject({ kind: 'other-request', existing: { document: { id: 'inbox|k', fingerprint: 'f1', messageId: 'm-1' } } });
      expect(store.calls).toEqual(['commit inbox|k', 'read inbox|k']);
      expect((await memory.read<Marker>('p', 'inbox|k'))?.document.fingerprint).toBe('f1');
    });

    it('answers vanished, naming the id, when the record the 409 named reads as missing (its ttl ran out, an operator deleted it)', async () => {
      const { answering, store } = stores();
      answering.answerCommit(() => true, { kind: 'already-exists', operationIndex: 0 });
      expect(await createOrClassify(store, 'p', marker('f1'), sameAs('f1'))).toEqual({ kind: 'vanished', id: 'inbox|k' });
      expect(store.calls).toEqual(['commit inbox|k', 'read inbox|k']);
    });

    it('reads and compares within the partition it wrote to', async () => {
      const { memory, store } = stores();
      await memory.commit('other', [create(marker('f9'))]);
      expect(await createOrClassify(store, 'p', marker('f1'), sameAs('f1'))).toEqual({ kind: 'committed' });
    });
  });

  describe('a batch', () => {
    const effect: Account = { id: 'account', balance: 10 };

    it('commits every operation together', async () => {
      const { memory, store } = stores();
      expect(await createOrClassify(store, 'p', [create(marker('f1')), create(effect)], sameAs('f1'))).toEqual({ kind: 'committed' });
      expect(
        memory
          .list('p')
          .map((d) => d.id)
          .sort(),
      ).toEqual(['account', 'inbox|k']);
    });

    it('classifies a 409 on the record operation it names, reading the id that operation wrote', async () => {
      const { memory, store } = stores();
      await memory.commit('p', [create(marker('f1', 'inbox|b'))]);
      const result = await createOrClassify<Marker>(store, 'p', [create(effect), create(marker('f1', 'inbox|b'))], sameAs('f1'), 1);
      expect(result).toMatchObject({ kind: 'same-request', existing: { document: { id: 'inbox|b' } } });
      expect(store.calls).toEqual(['commit account,inbox|b', 'read inbox|b']);
      expect(memory.list('p').map((d) => d.id)).toEqual(['inbox|b']);
    });

    it('hands back, unread, a refusal of another operation, with its index', async () => {
      const { memory, store } = stores();
      await memory.commit('p', [create(effect)]);
      const result = await createOrClassify(store, 'p', [create(marker('f1')), create(effect)], sameAs('f1'));
      expect(result).toEqual({ kind: 'not-committed', result: { kind: 'already-exists', operationIndex: 1 } });
      expect(store.calls).toEqual(['commit inbox|k,account']);
    });

    it('hands back a lost race on another operation as it came', async () => {
      const { memory, store } = stores();
      await memory.commit('p', [create(effect)]);
      const result = await createOrClassify(store, 'p', [create(marker('f1')), replace({ ...effect, balance: 11 } as Account, '"stale"')], sameAs('f1'));
      expect(result).toEqual({ kind: 'not-committed', result: { kind: 'lost-race', operationIndex: 1 } });
    });

    it('reads and classifies the record when its own replace is refused (it changed since it was read)', async () => {
      const { memory, store } = stores();
      await memory.commit('p', [create(marker('f1'))]);
      const result = await createOrClassify(store, 'p', [replace(marker('f2'), '"stale"'), create(effect)], sameAs('f2'));
      expect(result).toMatchObject({ kind: 'other-request', existing: { document: marker('f1') } });
      expect(store.calls).toEqual(['commit inbox|k,account', 'read inbox|k']);
    });

    it('answers vanished when the record its replace names is gone', async () => {
      const { store } = stores();
      expect(await createOrClassify(store, 'p', [replace(marker('f1'), '"1"')], sameAs('f1'))).toEqual({ kind: 'vanished', id: 'inbox|k' });
    });

    it.each([-1, 2, 0.5])('refuses a record index (%s) that names no operation of the batch, before it writes anything', async (index) => {
      const { store } = stores();
      await expect(createOrClassify(store, 'p', [create(marker('f1')), create(effect)], sameAs('f1'), index)).rejects.toThrow(
        new RangeError(`record operation ${index} is not in a batch of 2`),
      );
      expect(store.calls).toEqual([]);
    });
  });
});

describe('readAndClassify and classifyRecord', () => {
  it('decide a record read first as createOrClassify decides it after a 409', async () => {
    const { memory, store } = stores();
    await memory.commit('p', [create(marker('f1'))]);
    const stored = await memory.read<Marker>('p', 'inbox|k');
    expect(await readAndClassify(store, 'p', 'inbox|k', sameAs('f1'))).toEqual({ kind: 'same-request', existing: stored });
    expect(await readAndClassify(store, 'p', 'inbox|k', sameAs('f2'))).toEqual({ kind: 'other-request', existing: stored });
    expect(await readAndClassify(store, 'p', 'inbox|gone', sameAs('f1'))).toEqual({ kind: 'vanished', id: 'inbox|gone' });
    expect(classifyRecord(stored!, sameAs('f2'))).toEqual({ kind: 'other-request', existing: stored });
  });
});
