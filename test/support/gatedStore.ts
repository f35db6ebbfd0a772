import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';

type CommitFilter = (partitionKey: string, operations: readonly WriteOperation[]) => boolean;

/**
 * A store that holds every commit `when` picks until the test releases it, and counts how many a
 * flow has in flight at once: concurrency made visible, and its bound, without any timing. A held
 * commit reaches the inner store only when released; one never released is a worker that died
 * before its write.
 */
export class GatedStore implements DocumentStore {
  inFlight = 0;
  /** The most commits `when` picks that were in flight at once. */
  peak = 0;
  private readonly held: { readonly partitionKey: string; readonly go: () => void }[] = [];

  constructor(
    readonly inner: DocumentStore,
    private readonly when: CommitFilter,
  ) {}

  read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    return this.inner.read<D>(partitionKey, id);
  }

  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    return this.inner.find<D>(query);
  }

  async commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (!this.when(partitionKey, operations)) return this.inner.commit(partitionKey, operations);
    this.inFlight += 1;
    this.peak = Math.max(this.peak, this.inFlight);
    try {
      await new Promise<void>((go) => this.held.push({ partitionKey, go }));
      return await this.inner.commit(partitionKey, operations);
    } finally {
      this.inFlight -= 1;
    }
  }

  /**
   * The partitions of the commits held once the flow has started everything it can without them.
   * One turn of the event loop is enough and is not a timing: the in-memory store and the scripted
   * sender answer in microtasks, which all run before the turn ends.
   */
  async heldNow(): Promise<string[]> {
    await new Promise<void>((turn) => setImmediate(turn));
    return this.held.map((h) => h.partitionKey);
  }

  /** Lets the held commits of these partitions (all, when none is named) reach the store. */
  release(...partitionKeys: string[]): void {
    const picked = this.held.filter((h) => partitionKeys.length === 0 || partitionKeys.includes(h.partitionKey));
    for (const h of picked) this.held.splice(this.held.indexOf(h), 1);
    for (const h of picked) h.go();
  }
}
