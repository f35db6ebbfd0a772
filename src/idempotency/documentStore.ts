/**
 * The store contract the idempotent consumer relies on. Any store with per-partition atomic writes,
 * unique ids and optimistic concurrency can implement it (Cosmos DB does, with transactional batch):
 * - create of an existing id -> `already-exists` (the store, not a read-then-write, detects duplicates);
 * - replace with a stale `ifMatch` -> `lost-race` (another writer got there first: re-read, retry);
 * - all operations of one commit apply together or not at all.
 * Transient failures are thrown as `TransientStoreError`; they are never reported as outcomes.
 */
export interface StoredDocument {
  readonly id: string;
}

export interface VersionedDocument<D> {
  readonly document: D;
  /** Opaque version token; pass it back as `ifMatch` to replace only an unchanged document. */
  readonly etag: string;
}

export type WriteOperation =
  | { readonly kind: 'create'; readonly document: StoredDocument }
  | { readonly kind: 'replace'; readonly document: StoredDocument; readonly ifMatch: string };

export type CommitResult =
  | { readonly kind: 'committed' }
  | { readonly kind: 'already-exists'; readonly operationIndex: number }
  | { readonly kind: 'lost-race'; readonly operationIndex: number }
  | { readonly kind: 'not-found'; readonly operationIndex: number };

export interface DocumentStore {
  read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined>;
  commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult>;
}

export function create(document: StoredDocument): WriteOperation {
  return { kind: 'create', document };
}

export function replace(document: StoredDocument, ifMatch: string): WriteOperation {
  return { kind: 'replace', document, ifMatch };
}
