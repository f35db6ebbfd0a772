import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';

type CommitFilter = (partitionKey: string, operations: readonly WriteOperation[]) => boolean;
type ReadFilter = (partitionKey: string, id: string) => boolean;

/**
 * A store that answers one chosen call as the store would after someone else's step the reference
 * store cannot take: a document deleted (an operator, a ttl) so a replace finds nothing, or a read
 * comes back empty. The call picked is answered without reaching the inner store; the rest pass.
 */
export class AnsweringStore implements DocumentStore {
  private readonly commitAnswers: { when: CommitFilter; answer: CommitResult; left: number }[] = [];
  private readonly emptyReads: { when: ReadFilter; left: number; skip: number }[] = [];
  /** Commits answered from the script. */
  answered = 0;

  constructor(readonly inner: DocumentStore) {}

  /** The next `times` commits `when` picks get `answer` and change nothing. */
  answerCommit(when: CommitFilter, answer: CommitResult, times = 1): void {
    this.commitAnswers.push({ when, answer, left: times });
  }

  /** After `skip` reads that `when` picks pass, the next `times` find nothing. */
  emptyRead(when: ReadFilter, times = 1, skip = 0): void {
    this.emptyReads.push({ when, left: times, skip });
  }

  async read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    const empty = this.emptyReads.find((r) => r.left > 0 && r.when(partitionKey, id));
    if (empty && empty.skip > 0) empty.skip -= 1;
    else if (empty) {
      empty.left -= 1;
      return undefined;
    }
    return this.inner.read<D>(partitionKey, id);
  }

  async commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    const scripted = this.commitAnswers.find((c) => c.left > 0 && c.when(partitionKey, operations));
    if (scripted) {
      scripted.left -= 1;
      this.answered += 1;
      return scripted.answer;
    }
    return this.inner.commit(partitionKey, operations);
  }

  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    return this.inner.find<D>(query);
  }
}

/** Commits whose first operation is of this kind on a document of this docType. */
export const firstIs =
  (kind: WriteOperation['kind'], docType: string): CommitFilter =>
  (_pk, operations) =>
    operations[0]?.kind === kind && (operations[0].document as { docType?: string }).docType === docType;
