import { TransientStoreError } from '../../src/idempotency/index.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';
import { OrderIntake, intakeKeyRecordId } from '../../src/intake/index.js';
import type { CallerIdentityMode, IntakeCaller, IntakeHttpRequest, IntakeKeyRecord, IntakeResponse } from '../../src/intake/index.js';
import { idempotencyKeyHeader } from '../../src/http/idempotencyKeyHeader.js';
import { Gate, ProcessKilled } from './shipmentHarness.js';
import type { TestClock } from './shipmentHarness.js';
import { RecordingLog } from './recordingLog.js';

/** A request as a client sends it: the key as an sf-string, the body (one chunk) as JSON text unless given as bytes. */
export function orderRequest(key: string | undefined, body: unknown, headers: Record<string, string> = {}): IntakeHttpRequest {
  const bytes = body instanceof Uint8Array ? body : new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  const all = new Headers({ 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': idempotencyKeyHeader(key) }), ...headers });
  const stream = new ReadableStream<Uint8Array>({ start: (controller) => (controller.enqueue(bytes), controller.close()) });
  return { headers: all, body: stream };
}

/** Which batch a store wrapper acts on: the order's claim with its outbox entry, or a write of the key's record. */
const isClaimBatch = (operations: readonly WriteOperation[]) => operations.some((op) => (op.document as { docType?: string }).docType === 'intake');
const isKeyRecordWrite = (operations: readonly WriteOperation[], state: string) =>
  operations.some(
    (op) => (op.document as { docType?: string; state?: string }).docType === 'intake-key' && (op.document as { state?: string }).state === state,
  );

/**
 * The real store, with the crash points and pauses of the intake provoked on demand: a process
 * that dies right after its batch committed, or before it; a request held at a point while
 * another runs; the store unavailable for one batch.
 */
export class IntakeScriptedStore implements DocumentStore {
  /** The claim batch commits, then the process dies before it can answer (or complete the key). */
  killAfterClaimBatch = false;
  /** The process dies before its claim batch is sent. */
  killBeforeClaimBatch = false;
  /** The claim batch fails once with a 503 from the store. */
  failClaimBatchOnce = false;
  /** The next claim batch waits here before it is sent. */
  holdBeforeClaimBatch?: Gate;
  /** The next completion of a key record waits here before it is sent. */
  holdBeforeCompletion?: Gate;
  /** The claim batch is applied, but its answer is lost: the caller gets a 503 (a timeout, a reset connection). */
  loseClaimBatchAnswerOnce = false;
  /** Once the claim batch is applied, reads of the documents these ids name fail with a 503. */
  failReadsAfterClaimBatch: readonly string[] = [];
  /** Reads of the documents these ids name fail with a 503, from the start. */
  failReads: readonly string[] = [];
  /** Every completion of a key record fails with a 503, unapplied. */
  failCompletion = false;
  private dead = false;
  private claimBatchApplied = false;
  constructor(readonly inner: DocumentStore) {}
  /** A store for another process: same documents, its own crash points. */
  sibling(): IntakeScriptedStore {
    return new IntakeScriptedStore(this.inner);
  }
  read<D extends StoredDocument>(pk: string, id: string): Promise<VersionedDocument<D> | undefined> {
    if (this.dead) return Promise.reject(new ProcessKilled('earlier'));
    if (this.failReads.includes(id) || (this.claimBatchApplied && this.failReadsAfterClaimBatch.includes(id)))
      return Promise.reject(new TransientStoreError(`the store answered 503 reading ${id} (injected)`));
    return this.inner.read<D>(pk, id);
  }
  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    if (this.dead) return Promise.reject(new ProcessKilled('earlier'));
    return this.inner.find<D>(query);
  }
  async commit(pk: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (this.dead) throw new ProcessKilled('earlier');
    if (isClaimBatch(operations)) {
      const hold = this.holdBeforeClaimBatch;
      this.holdBeforeClaimBatch = undefined;
      await hold?.pass();
      if (this.killBeforeClaimBatch) {
        this.dead = true;
        throw new ProcessKilled('before the claim batch');
      }
      if (this.failClaimBatchOnce) {
        this.failClaimBatchOnce = false;
        throw new TransientStoreError('the store answered 503 (injected)');
      }
      const result = await this.inner.commit(pk, operations);
      this.claimBatchApplied ||= result.kind === 'committed';
      if (this.killAfterClaimBatch) {
        this.dead = true;
        throw new ProcessKilled('after the claim batch committed, before the response');
      }
      if (this.loseClaimBatchAnswerOnce) {
        this.loseClaimBatchAnswerOnce = false;
        throw new TransientStoreError("the store's answer to the claim batch was lost (injected)");
      }
      return result;
    }
    if (isKeyRecordWrite(operations, 'completed')) {
      const hold = this.holdBeforeCompletion;
      this.holdBeforeCompletion = undefined;
      await hold?.pass();
      if (this.failCompletion) throw new TransientStoreError('the store answered 503 completing the key record (injected)');
    }
    return this.inner.commit(pk, operations);
  }
}

export interface IntakeUnderTest {
  readonly intake: OrderIntake;
  readonly log: RecordingLog;
  submit(request: IntakeHttpRequest, invocationId?: string): Promise<IntakeResponse>;
}

export const intakeSettings = {
  ordersQueueName: 'orders',
  keyRetentionSeconds: 172_800,
  leaseSeconds: 10,
  maxConcurrencyAttempts: 10,
  callerIdentity: 'shared',
} as const;

export function intakeOn(store: DocumentStore, clock: TestClock, maxBodyBytes = 64 * 1024, callerIdentity: CallerIdentityMode = 'shared'): IntakeUnderTest {
  const intake = new OrderIntake({ ...intakeSettings, callerIdentity, store, now: clock.now }, maxBodyBytes);
  const log = new RecordingLog();
  let n = 0;
  return {
    intake,
    log,
    submit: (request, invocationId) => {
      n += 1;
      return intake.handle(request, { invocationId: invocationId ?? `invocation-${n}`, log });
    },
  };
}

export async function keyRecordOf(store: DocumentStore, key: string, caller?: IntakeCaller) {
  const id = intakeKeyRecordId(key, caller);
  return (await store.read<IntakeKeyRecord>(id, id))?.document;
}

export { Gate, ProcessKilled };
