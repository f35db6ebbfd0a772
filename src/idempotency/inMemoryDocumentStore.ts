import { assertQueryable, compareByField, matchesQuery } from './documentStore.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from './documentStore.js';

interface Entry {
  readonly document: StoredDocument;
  readonly etag: string;
  readonly expiresAtEpochMs: number | undefined;
}

/**
 * A reference implementation of the store contract, atomic by construction (a commit runs in one
 * synchronous step). It serves unit tests and is the yardstick the Cosmos adapter's contract
 * suite is compared against. Honours a per-document `ttl` in seconds, as Cosmos does.
 */
export class InMemoryDocumentStore implements DocumentStore {
  private readonly partitions = new Map<string, Map<string, Entry>>();
  private version = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    const entry = this.live(partitionKey, id);
    return entry && { document: structuredClone(entry.document) as D, etag: entry.etag };
  }

  async commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    const failure = operations.map((op, index) => this.check(partitionKey, op, index)).find((r) => r !== undefined);
    if (failure) return failure;
    const partition = this.partition(partitionKey);
    for (const op of operations) {
      partition.set(op.document.id, this.entryFor(op.document));
    }
    return { kind: 'committed' };
  }

  async find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    assertQueryable(query);
    const keys = query.partitionKey === undefined ? [...this.partitions.keys()] : [query.partitionKey];
    const found = keys.flatMap((partitionKey) =>
      [...this.partition(partitionKey).keys()]
        .map((id) => this.live(partitionKey, id))
        .filter((e): e is Entry => e !== undefined && matchesQuery(e.document as unknown as Record<string, unknown>, query))
        .map((e) => ({ document: structuredClone(e.document) as D, etag: e.etag })),
    );
    if (query.orderBy !== undefined) {
      const compare = compareByField(query.orderBy);
      found.sort((a, b) => compare(a.document as unknown as Record<string, unknown>, b.document as unknown as Record<string, unknown>));
    }
    return query.limit === undefined ? found : found.slice(0, query.limit);
  }

  /** Every live document of a partition, for assertions. */
  list(partitionKey: string): StoredDocument[] {
    return [...this.partition(partitionKey).keys()]
      .map((id) => this.live(partitionKey, id))
      .filter((e): e is Entry => e !== undefined)
      .map((e) => structuredClone(e.document));
  }

  private check(partitionKey: string, op: WriteOperation, operationIndex: number): CommitResult | undefined {
    const existing = this.live(partitionKey, op.document.id);
    if (op.kind === 'create') return existing ? { kind: 'already-exists', operationIndex } : undefined;
    if (!existing) return { kind: 'not-found', operationIndex };
    return existing.etag === op.ifMatch ? undefined : { kind: 'lost-race', operationIndex };
  }

  private live(partitionKey: string, id: string): Entry | undefined {
    const entry = this.partitions.get(partitionKey)?.get(id);
    if (entry?.expiresAtEpochMs !== undefined && entry.expiresAtEpochMs <= this.now()) return undefined;
    return entry;
  }

  private entryFor(document: StoredDocument): Entry {
    // Stryker disable next-line AssignmentOperator: counting down gives unique etags too; only their uniqueness is promised
    this.version += 1;
    const ttlSeconds = (document as { ttl?: unknown }).ttl;
    const expiresAtEpochMs = typeof ttlSeconds === 'number' && ttlSeconds > 0 ? this.now() + ttlSeconds * 1000 : undefined;
    return { document: structuredClone(document), etag: `"${this.version}"`, expiresAtEpochMs };
  }

  private partition(partitionKey: string): Map<string, Entry> {
    let partition = this.partitions.get(partitionKey);
    if (!partition) {
      partition = new Map();
      this.partitions.set(partitionKey, partition);
    }
    return partition;
  }
}
