import type { Container, JSONObject, OperationInput, OperationResponse } from '@azure/cosmos';
import { assertQueryable } from '../idempotency/index.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../idempotency/index.js';
import { classifyStoreFailure, statusCodeOf } from './storeErrors.js';

type JsonObject = Record<string, unknown>;

/**
 * The store contract on a Cosmos DB container. A commit of one operation is a plain create or
 * conditional replace; several go in one transactional batch, which Cosmos applies atomically
 * within a logical partition. Never an upsert: an upsert would overwrite the evidence of a duplicate.
 */
export class CosmosDocumentStore implements DocumentStore {
  constructor(private readonly container: Container) {}

  async read<D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> {
    try {
      const { resource, etag } = await this.container.item(id, partitionKey).read<D & JsonObject>();
      return resource === undefined ? undefined : { document: resource, etag: etag ?? (resource._etag as string) };
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw classifyStoreFailure(error, `read ${id}`);
    }
  }

  async find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    assertQueryable(query);
    const conditions = ['c.docType = @docType'];
    const parameters: { name: string; value: string }[] = [{ name: '@docType', value: query.docType }];
    Object.entries(query.equals ?? {}).forEach(([field, value], i) => {
      conditions.push(`c.${field} = @v${i}`);
      parameters.push({ name: `@v${i}`, value });
    });
    if (query.before) {
      conditions.push(`c.${query.before.field} < @before`);
      parameters.push({ name: '@before', value: query.before.value });
    }
    if (query.after) {
      conditions.push(`c.${query.after.field} > @after`);
      parameters.push({ name: '@after', value: query.after.value });
    }
    // A literal TOP: the limit was checked as a positive integer above, and not every engine takes a parameter there.
    const top = query.limit === undefined ? '' : `TOP ${query.limit} `;
    // Field names were checked as plain identifiers above. A sorted path needs a range index (infra/modules/cosmos.bicep).
    const order = query.orderBy === undefined ? '' : ` ORDER BY c.${query.orderBy}`;
    const spec = { query: `SELECT ${top}* FROM c WHERE ${conditions.join(' AND ')}${order}`, parameters };
    try {
      const options = query.partitionKey === undefined ? {} : { partitionKey: query.partitionKey };
      const { resources } = await this.container.items.query<D & JsonObject>(spec, options).fetchAll();
      return resources.map((resource) => ({ document: resource, etag: resource._etag as string }));
    } catch (error) {
      throw classifyStoreFailure(error, `query ${query.docType}`);
    }
  }

  async commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    const [only] = operations;
    if (operations.length === 1 && only) return this.commitOne(partitionKey, only);
    return this.commitBatch(partitionKey, operations);
  }

  private async commitOne(partitionKey: string, op: WriteOperation): Promise<CommitResult> {
    try {
      if (op.kind === 'create') {
        await this.container.items.create(op.document);
      } else {
        await this.container.item(op.document.id, partitionKey).replace(op.document, { accessCondition: { type: 'IfMatch', condition: op.ifMatch } });
      }
      return { kind: 'committed' };
    } catch (error) {
      const mapped = resultForStatus(statusCodeOf(error), 0);
      if (mapped) return mapped;
      throw classifyStoreFailure(error, `${op.kind} ${op.document.id}`);
    }
  }

  private async commitBatch(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    let results: OperationResponse[];
    try {
      const response = await this.container.items.batch(
        operations.map((op) => toBatchOperation(op, partitionKey)),
        partitionKey,
      );
      results = response.result ?? [];
    } catch (error) {
      throw classifyStoreFailure(error, `batch of ${operations.length} in partition ${partitionKey}`);
    }
    // 424 marks operations that failed only because another one did; the other status is the cause.
    const failedIndex = results.findIndex((r) => r.statusCode >= 400 && r.statusCode !== 424);
    if (failedIndex < 0) {
      if (results.length !== operations.length || results.some((r) => r.statusCode >= 400)) {
        throw classifyStoreFailure(new Error('batch answered without a cause of failure'), 'batch');
      }
      return { kind: 'committed' };
    }
    const status = results[failedIndex]?.statusCode;
    const mapped = resultForStatus(status, failedIndex);
    if (mapped) return mapped;
    throw classifyStoreFailure({ code: status, message: `operation ${failedIndex} of the batch failed` }, 'batch');
  }
}

function resultForStatus(status: number | undefined, operationIndex: number): CommitResult | undefined {
  if (status === 409) return { kind: 'already-exists', operationIndex };
  if (status === 412) return { kind: 'lost-race', operationIndex };
  if (status === 404) return { kind: 'not-found', operationIndex };
  return undefined;
}

function toBatchOperation(op: WriteOperation, partitionKey: string): OperationInput {
  const resourceBody = op.document as unknown as JSONObject;
  if (op.kind === 'create') return { operationType: 'Create', partitionKey, resourceBody };
  return { operationType: 'Replace', partitionKey, id: op.document.id, resourceBody, ifMatch: op.ifMatch };
}
