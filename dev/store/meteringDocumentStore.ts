import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';
import { CountingDocumentStore } from './countingDocumentStore.js';
import { bodyBytes, requestUnitsOf } from './requestUnitModel.js';
import type { MeteredCall } from './requestUnitModel.js';

type Json = Readonly<Record<string, unknown>>;

/** What the store calls since the last reset moved and would cost. */
export interface StoreTally {
  readonly trips: number;
  readonly documentsWritten: number;
  readonly bytesWritten: number;
  readonly documentsRead: number;
  readonly bytesRead: number;
  /** By requestUnitModel.ts, from the documents each call moved. */
  readonly modelRequestUnits: number;
}

/**
 * Counts, besides the round trips, the documents each call wrote and read and their sizes, and
 * prices each call with the published request-unit model. A replace is priced against the version
 * this store last saw of that document (the flows read before they replace).
 */
export class MeteringDocumentStore extends CountingDocumentStore {
  private tally = emptyTally();
  private readonly lastSeen = new Map<string, Json>();

  constructor(inner: DocumentStore) {
    super(inner);
  }

  get totals(): StoreTally {
    return { ...this.tally, trips: this.trips };
  }

  override async read<D extends StoredDocument>(pk: string, id: string): Promise<VersionedDocument<D> | undefined> {
    const found = await super.read<D>(pk, id);
    const document = found?.document as Json | undefined;
    if (document) this.seen(pk, document);
    this.record({ kind: 'read', found: document }, { read: document ? [document] : [] });
    return found;
  }

  override async find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    const found = await super.find<D>(query);
    const documents = found.map((f) => f.document as Json);
    documents.forEach((d) => this.seen(String(d.orderId ?? query.partitionKey), d));
    this.record({ kind: 'query', found: documents }, { read: documents });
    return found;
  }

  override async commit(pk: string, ops: readonly WriteOperation[]): Promise<CommitResult> {
    const writes = ops.map((op) => {
      const document = op.document as unknown as Json;
      return op.kind === 'create'
        ? { kind: 'create' as const, document }
        : { kind: 'replace' as const, document, previous: this.lastSeen.get(key(pk, op.document.id)) };
    });
    const result = await super.commit(pk, ops);
    const failedAt = result.kind === 'committed' ? undefined : result.operationIndex;
    if (failedAt === undefined) writes.forEach((w) => this.seen(pk, w.document));
    this.record({ kind: 'commit', writes, failedAt }, { written: failedAt === undefined ? writes.map((w) => w.document) : [] });
    return result;
  }

  /** Forgets the versions seen too, so a long bench holds only one run's: every flow reads what it replaces within the message. */
  override reset(): void {
    super.reset();
    this.tally = emptyTally();
    this.lastSeen.clear();
  }

  private record(call: MeteredCall, moved: { read?: readonly Json[]; written?: readonly Json[] }): void {
    const [read, written] = [moved.read ?? [], moved.written ?? []];
    this.tally = {
      trips: 0,
      documentsRead: this.tally.documentsRead + read.length,
      bytesRead: this.tally.bytesRead + read.reduce((sum, d) => sum + bodyBytes(d), 0),
      documentsWritten: this.tally.documentsWritten + written.length,
      bytesWritten: this.tally.bytesWritten + written.reduce((sum, d) => sum + bodyBytes(d), 0),
      modelRequestUnits: this.tally.modelRequestUnits + requestUnitsOf(call),
    };
  }

  private seen(pk: string, document: Json): void {
    this.lastSeen.set(key(pk, String(document.id)), document);
  }
}

function key(pk: string, id: string): string {
  return JSON.stringify([pk, id]);
}

function emptyTally(): StoreTally {
  return { trips: 0, documentsWritten: 0, bytesWritten: 0, documentsRead: 0, bytesRead: 0, modelRequestUnits: 0 };
}
