import { create } from './documentStore.js';
import type { CommitResult, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from './documentStore.js';

/** Whether a stored record is this request's: its fingerprint (or whatever the flow compares) names it. */
export type IsSameRequest<D> = (existing: D) => boolean;

/**
 * A record that was there, told apart: the same request's (a redelivery, a client's retry: no second
 * effect) or another's under the same id (a conflict, never accepted silently). The record travels
 * with the answer as evidence, and with its etag, so the caller neither reads it again nor guesses.
 */
export type ExistingRecord<D extends StoredDocument> =
  { readonly kind: 'same-request'; readonly existing: VersionedDocument<D> } | { readonly kind: 'other-request'; readonly existing: VersionedDocument<D> };

/**
 * The store refused the record's write because the record is there, then read it as missing (its ttl
 * ran out, an operator deleted it): nothing is decided, so the caller tries again.
 */
export interface VanishedRecord {
  readonly kind: 'vanished';
  readonly id: string;
}

export interface Committed {
  readonly kind: 'committed';
}

/** Another operation of the batch was refused: the caller's to decide (nothing was read). */
export interface NotCommitted {
  readonly kind: 'not-committed';
  readonly result: Exclude<CommitResult, Committed>;
}

export type CreateOrClassifyResult<D extends StoredDocument> = Committed | ExistingRecord<D> | VanishedRecord;
export type CommitOrClassifyResult<D extends StoredDocument> = CreateOrClassifyResult<D> | NotCommitted;

/**
 * The heart of the pattern, once: create the record (alone, or in a batch with the effect it marks)
 * and let the store, not a read before the write, find that it exists. On a refusal of the record's
 * own operation (a create's 409; in a batch that replaces a record it read, a 412 or 404 on it) the
 * record is read as it is now and told apart by `isSame`. Refusals of the batch's other operations
 * are handed back as they came.
 *
 * A single document is created alone, at operation 0; in a batch, `recordIndex` names the operation
 * that writes the record (0 unless said).
 */
export function createOrClassify<D extends StoredDocument>(
  store: DocumentStore,
  partitionKey: string,
  document: D,
  isSame: IsSameRequest<D>,
): Promise<CreateOrClassifyResult<D>>;
export function createOrClassify<D extends StoredDocument>(
  store: DocumentStore,
  partitionKey: string,
  operations: readonly WriteOperation[],
  isSame: IsSameRequest<D>,
  recordIndex?: number,
): Promise<CommitOrClassifyResult<D>>;
export async function createOrClassify<D extends StoredDocument>(
  store: DocumentStore,
  partitionKey: string,
  write: D | readonly WriteOperation[],
  isSame: IsSameRequest<D>,
  recordIndex = 0,
): Promise<CommitOrClassifyResult<D>> {
  const operations = isBatch(write) ? write : [create(write)];
  const record = operations[recordIndex];
  if (record === undefined) throw new RangeError(`record operation ${recordIndex} is not in a batch of ${operations.length}`);
  const result = await store.commit(partitionKey, operations);
  if (result.kind === 'committed') return result;
  if (result.operationIndex !== recordIndex) return { kind: 'not-committed', result };
  return readAndClassify(store, partitionKey, record.document.id, isSame);
}

/** The record under this id, read and told apart; `vanished` when there is none to read. */
export async function readAndClassify<D extends StoredDocument>(
  store: DocumentStore,
  partitionKey: string,
  id: string,
  isSame: IsSameRequest<D>,
): Promise<ExistingRecord<D> | VanishedRecord> {
  const existing = await store.read<D>(partitionKey, id);
  return existing ? classifyRecord(existing, isSame) : { kind: 'vanished', id };
}

/** A record already in hand (a flow that reads before it writes), told apart as after a 409. */
export function classifyRecord<D extends StoredDocument>(existing: VersionedDocument<D>, isSame: IsSameRequest<D>): ExistingRecord<D> {
  return { kind: isSame(existing.document) ? 'same-request' : 'other-request', existing };
}

function isBatch<D extends StoredDocument>(write: D | readonly WriteOperation[]): write is readonly WriteOperation[] {
  return Array.isArray(write);
}
