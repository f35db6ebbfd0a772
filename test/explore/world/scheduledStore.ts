import type {
  CommitResult,
  DocumentQuery,
  DocumentStore,
  InMemoryDocumentStore,
  StoredDocument,
  VersionedDocument,
  WriteOperation,
} from '../../../src/idempotency/index.js';
import { never } from './awaitPoints.js';
import type { Actor, AwaitPoints } from './awaitPoints.js';
import { errorFor } from './fates.js';
import type { WriteFate } from './fates.js';

export interface ScheduledStoreOptions {
  /** The fate of the n-th write the store serves (in the order served); past the list, `applied`. */
  readonly fates: readonly WriteFate[];
  /**
   * Reproduces the order flow before 43efa77: the parked items were listed concurrently with the
   * arrival gate's read (Promise.all), so the listing could be served before the read. With this on,
   * a gate read also starts the listing of its partition's parked items as a separate scheduled
   * step, and the same actor's next listing of them gets that result, whenever it was served.
   */
  readonly listBesideGateRead?: boolean;
  /** Reproduces the claims before f8e92a7: a payment claim written again unchanged (its renewal) is answered committed and not written. */
  readonly claimWrittenOnce?: boolean;
}

/**
 * The reference in-memory store, with every call an await point of the scheduler (AwaitPoints) and
 * every write given its fate: applied, refused before applying, or applied with its answer lost.
 * An actor that dies at a call never hears from it again (after the write, if `afterApplying`).
 */
export class ScheduledStore {
  private writes = 0;

  constructor(
    readonly inner: InMemoryDocumentStore,
    private readonly points: AwaitPoints,
    private readonly options: ScheduledStoreOptions,
  ) {}

  /** The store as one actor calls it: each call is that actor's await point. */
  forActor(actor: Actor): DocumentStore {
    return {
      read: (partitionKey, id) => this.read(actor, partitionKey, id),
      commit: (partitionKey, operations) => this.commit(actor, partitionKey, operations),
      find: (query) => this.find(actor, query),
    };
  }

  private async read<D extends StoredDocument>(actor: Actor, partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    const label = `read ${partitionKey}/${id}`;
    actor.prefetched =
      this.options.listBesideGateRead && actor.messageType === 'OrderPlaced' && id.startsWith('parking-lot|')
        ? { partitionKey, items: this.listBeside(actor, partitionKey) }
        : undefined;
    const step = await this.points.pass(actor, label);
    if (step.dies) return this.dead(step.actor, label);
    const found = await this.inner.read<D>(partitionKey, id);
    this.points.timeline.add(step.actor.name, `${label} -> ${found ? `${describe(found.document)} etag ${found.etag}` : 'none'}`);
    return found;
  }

  private async commit(actor: Actor, partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    const label = `commit ${partitionKey} [${operations.map((op) => `${op.kind} ${describe(op.document)}${op.kind === 'replace' ? ` if ${op.ifMatch}` : ''}`).join(', ')}]`;
    actor.prefetched = undefined;
    const step = await this.points.pass(actor, label);
    if (step.dies && !step.afterApplying) return this.dead(step.actor, label);
    const fate: WriteFate = step.dies ? 'applied' : (this.options.fates[this.writes] ?? 'applied');
    this.writes += 1;
    if (fate.startsWith('refused-')) {
      this.points.timeline.add(step.actor.name, `${label} -> REFUSED (${fate}), nothing applied`);
      this.points.timeline.count('write refused');
      throw errorFor(fate as Exclude<WriteFate, 'applied'>);
    }
    const result = (await this.renewalDropped(partitionKey, operations)) ?? (await this.inner.commit(partitionKey, operations));
    const answer = result.kind === 'committed' ? 'committed' : `${result.kind} at operation ${result.operationIndex}`;
    if (step.dies) {
      this.points.timeline.add(step.actor.name, `${label} -> ${answer}, but the worker died before hearing it`);
      this.points.timeline.count('worker died after its write applied');
      return this.dead(step.actor, label);
    }
    if (fate !== 'applied') {
      this.points.timeline.add(step.actor.name, `${label} -> ${answer}, ANSWER LOST (${fate})`);
      this.points.timeline.count('write applied, answer lost');
      throw errorFor(fate as Exclude<WriteFate, 'applied'>);
    }
    this.points.timeline.add(step.actor.name, `${label} -> ${answer}`);
    this.points.timeline.count(`commit ${result.kind}`);
    return result;
  }

  /** With `claimWrittenOnce`: a payment claim replaced by itself (its etag still current) is left as it was, its time-to-live running on. */
  private async renewalDropped(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult | undefined> {
    const [op] = operations;
    if (!this.options.claimWrittenOnce || operations.length !== 1 || op?.kind !== 'replace') return undefined;
    if ((op.document as { docType?: string }).docType !== 'payment-claim') return undefined;
    const stored = await this.inner.read(partitionKey, op.document.id);
    return stored?.etag === op.ifMatch && JSON.stringify(stored.document) === JSON.stringify(op.document) ? { kind: 'committed' } : undefined;
  }

  private async find<D extends StoredDocument>(actor: Actor, query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    const label = `find ${query.docType} in ${query.partitionKey ?? 'all partitions'} ${JSON.stringify(query.equals ?? {})}${query.before ? ` ${query.before.field} < ${query.before.value}` : ''}`;
    const prefetched = actor.prefetched;
    actor.prefetched = undefined;
    if (prefetched && prefetched.partitionKey === query.partitionKey && isParkedListing(query)) return (await prefetched.items) as VersionedDocument<D>[];
    const step = await this.points.pass(actor, label);
    if (step.dies) return this.dead(step.actor, label);
    const found = await this.inner.find<D>(query);
    this.points.timeline.add(step.actor.name, `${label} -> [${found.map((f) => `${describe(f.document)} etag ${f.etag}`).join(', ')}]`);
    return found;
  }

  /** The old listing, served whenever the scheduler releases it, beside the gate read that started it. */
  private async listBeside(actor: Actor, partitionKey: string): Promise<unknown[]> {
    const query: DocumentQuery = { docType: 'parked', partitionKey, equals: { state: 'parked' } };
    await this.points.pass(actor, `find parked in ${partitionKey} (beside the gate read)`);
    const found = await this.inner.find(query);
    this.points.timeline.add(actor.name, `find parked in ${partitionKey} (beside the gate read) -> [${found.map((f) => describe(f.document)).join(', ')}]`);
    return found;
  }

  private dead<T>(actor: Actor, label: string): Promise<T> {
    this.points.die(actor, label);
    return never();
  }
}

function isParkedListing(query: DocumentQuery): boolean {
  return query.docType === 'parked' && query.equals?.state === 'parked' && Object.keys(query.equals).length === 1 && query.before === undefined;
}

/** A document in a few words: its id, and the state or amounts that matter to the invariants. */
function describe(document: StoredDocument): string {
  const d = document as StoredDocument & { state?: string; amountPaid?: number; statusVersion?: number };
  if (d.state !== undefined) return `${d.id}(${d.state})`;
  if (d.amountPaid !== undefined) return `${d.id}(paid ${d.amountPaid}, v${d.statusVersion})`;
  return d.id;
}
