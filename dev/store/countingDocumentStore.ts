import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';

/** Counts the store round trips a flow makes: the tests hold paths to their budget, the bench prints them. */
export class CountingDocumentStore implements DocumentStore {
  reads = 0;
  commits = 0;
  queries = 0;
  constructor(private readonly inner: DocumentStore) {}

  get trips(): number {
    return this.reads + this.commits + this.queries;
  }

  read<D extends StoredDocument>(pk: string, id: string): Promise<VersionedDocument<D> | undefined> {
    this.reads += 1;
    return this.inner.read<D>(pk, id);
  }

  commit(pk: string, ops: readonly WriteOperation[]): Promise<CommitResult> {
    this.commits += 1;
    return this.inner.commit(pk, ops);
  }

  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    this.queries += 1;
    return this.inner.find<D>(query);
  }

  reset(): void {
    this.reads = 0;
    this.commits = 0;
    this.queries = 0;
  }
}
