import type { CommitResult, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';

/** Counts the store round trips a flow makes: the tests hold paths to their budget, the bench prints them. */
export class CountingDocumentStore implements DocumentStore {
  reads = 0;
  commits = 0;
  constructor(private readonly inner: DocumentStore) {}

  get trips(): number {
    return this.reads + this.commits;
  }

  read<D extends StoredDocument>(pk: string, id: string): Promise<VersionedDocument<D> | undefined> {
    this.reads += 1;
    return this.inner.read<D>(pk, id);
  }

  commit(pk: string, ops: readonly WriteOperation[]): Promise<CommitResult> {
    this.commits += 1;
    return this.inner.commit(pk, ops);
  }

  reset(): void {
    this.reads = 0;
    this.commits = 0;
  }
}
