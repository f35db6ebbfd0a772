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
  { readonly kind: 'create'; readonly document: StoredDocument } | { readonly kind: 'replace'; readonly document: StoredDocument; readonly ifMatch: string };

export type CommitResult =
  | { readonly kind: 'committed' }
  | { readonly kind: 'already-exists'; readonly operationIndex: number }
  | { readonly kind: 'lost-race'; readonly operationIndex: number }
  | { readonly kind: 'not-found'; readonly operationIndex: number };

/**
 * Documents found by their `docType` and a few plain fields. With a partition key the query stays in
 * that partition (cheap); without one it fans out across partitions, which only a sweeper should do.
 */
export interface DocumentQuery {
  readonly docType: string;
  readonly partitionKey?: string;
  /** Top-level string fields that must equal these values. */
  readonly equals?: Readonly<Record<string, string>>;
  /** A top-level string field (an ISO time, say) that must sort before this value. */
  readonly before?: { readonly field: string; readonly value: string };
  /** A top-level string field that must sort after this value: where a paged sweep goes on from. */
  readonly after?: { readonly field: string; readonly value: string };
  /**
   * Ascending by this top-level field. With `limit` and `after` on the same field it pages: a sweep
   * reads the oldest first and goes on from the last it saw, so a bounded run is fair to every document.
   */
  readonly orderBy?: string;
  /** At most this many documents (any of those that match, or the first by `orderBy`): bounds what one sweep reads and costs. */
  readonly limit?: number;
}

export interface DocumentStore {
  read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined>;
  commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult>;
  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]>;
}

/** Field names a query may name: plain identifiers, so a query can never be more than it says. */
export const queryableField = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a query's field names; a store calls it before it builds anything from them. */
export function assertQueryable(query: DocumentQuery): void {
  const fields = [
    ...Object.keys(query.equals ?? {}),
    ...(query.before ? [query.before.field] : []),
    ...(query.after ? [query.after.field] : []),
    ...(query.orderBy === undefined ? [] : [query.orderBy]),
  ];
  const bad = fields.find((field) => !queryableField.test(field));
  if (bad !== undefined) throw new RangeError(`query field ${JSON.stringify(bad)} is not a plain identifier`);
  if (query.limit !== undefined && !(Number.isInteger(query.limit) && query.limit > 0))
    throw new RangeError(`query limit ${query.limit} is not a positive integer`);
}

/** The same test in memory, for stores that hold their documents themselves. */
export function matchesQuery(document: Readonly<Record<string, unknown>>, query: DocumentQuery): boolean {
  if (document.docType !== query.docType) return false;
  for (const [field, value] of Object.entries(query.equals ?? {})) if (document[field] !== value) return false;
  if (query.before) {
    const value = document[query.before.field];
    if (typeof value !== 'string' || !(value < query.before.value)) return false;
  }
  if (query.after) {
    const value = document[query.after.field];
    if (typeof value !== 'string' || !(value > query.after.value)) return false;
  }
  return true;
}

/** Ascending by a top-level string field, as the store's `ORDER BY` sorts strings (ordinal). */
export function compareByField(field: string): (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>) => number {
  return (a, b) => {
    const [x, y] = [String(a[field] ?? ''), String(b[field] ?? '')];
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

export function create(document: StoredDocument): WriteOperation {
  return { kind: 'create', document };
}

export function replace(document: StoredDocument, ifMatch: string): WriteOperation {
  return { kind: 'replace', document, ifMatch };
}
