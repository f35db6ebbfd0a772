import type {
  CommitResult,
  DocumentQuery,
  DocumentStore,
  InMemoryDocumentStore,
  StoredDocument,
  VersionedDocument,
  WriteOperation,
} from '../../src/idempotency/index.js';

type CommitFilter = (partitionKey: string, operations: readonly WriteOperation[]) => boolean;
type ReadFilter = (partitionKey: string, id: string) => boolean;

interface Hook<F> {
  readonly when: F;
  readonly interleave: () => Promise<unknown>;
  left: number;
}

/**
 * A store through which a test puts another writer's step exactly between a flow's read and its
 * write, every time: `interleave` runs just before the next commit (or read) that `when` picks, as
 * many times as asked. Lost races are provoked this way, never left to timing.
 */
export class InterleavingStore implements DocumentStore {
  commits = 0;
  reads = 0;
  /** Every commit asked of the store, in order, whatever its result. */
  readonly commitLog: { readonly partitionKey: string; readonly operations: readonly WriteOperation[] }[] = [];
  queries = 0;
  private readonly commitHooks: Hook<CommitFilter>[] = [];
  private readonly readHooks: Hook<ReadFilter>[] = [];

  constructor(readonly inner: InMemoryDocumentStore) {}

  beforeCommit(when: CommitFilter, interleave: () => Promise<unknown>, times = 1): void {
    this.commitHooks.push({ when, interleave, left: times });
  }

  beforeRead(when: ReadFilter, interleave: () => Promise<unknown>, times = 1): void {
    this.readHooks.push({ when, interleave, left: times });
  }

  async read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    this.reads += 1;
    await runHook(this.readHooks, (when) => when(partitionKey, id));
    return this.inner.read<D>(partitionKey, id);
  }

  async commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    this.commits += 1;
    this.commitLog.push({ partitionKey, operations });
    await runHook(this.commitHooks, (when) => when(partitionKey, operations));
    return this.inner.commit(partitionKey, operations);
  }

  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    this.queries += 1;
    return this.inner.find<D>(query);
  }

  get trips(): number {
    return this.reads + this.commits + this.queries;
  }
}

async function runHook<F>(hooks: Hook<F>[], picks: (when: F) => boolean): Promise<void> {
  const hook = hooks.find((h) => h.left > 0 && picks(h.when));
  if (!hook) return;
  hook.left -= 1;
  await hook.interleave();
}

/** Operations that create or replace a document of this docType. */
export const touches = (docType: string) => (_partitionKey: string, operations: readonly WriteOperation[]) =>
  operations.some((op) => (op.document as { docType?: string }).docType === docType);
