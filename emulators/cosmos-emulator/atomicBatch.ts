import type { IncomingMessage, ServerResponse } from 'node:http';
import type Account from '@vercel/cosmosdb-server/lib/account';
import type Collection from '@vercel/cosmosdb-server/lib/account/collection';
import * as documentOperations from '@vercel/cosmosdb-server/lib/handler/_document-operations';
import type { OperationResult } from '@vercel/cosmosdb-server/lib/handler/_document-operations';
import readJson from '@vercel/cosmosdb-server/lib/json';
import { asOneChange } from './changeFeed.js';
import { conditionalPatch } from './conditionalPatch.js';
import { itemProblem } from './requestValidation.js';

/** The private storage of the library's collection, which a rollback has to put back. */
interface DocumentStorage {
  _data: Map<unknown, unknown>;
  _index: Map<unknown, unknown>;
  _ridCount: number;
}

export type BatchOperation = { operationType?: string; [k: string]: unknown };

/**
 * Transactional batch as Cosmos DB does it: the operations apply in order, and if one fails none
 * of them stays applied. The failing operation reports its own status, the others 424, and the
 * response is 207 Multi-Status. (The library's own handler stops at the failure but keeps the
 * operations before it.) The operations run synchronously between snapshot and commit, so no
 * other request can interleave with a batch.
 */
export async function handleAtomicBatch(
  account: Account,
  req: IncomingMessage,
  res: ServerResponse,
  params: { dbId: string; collId: string },
): Promise<unknown> {
  const request = await readOperations(account, req, res, params, 'a batch');
  if ('refusal' in request) return request.refusal;
  const { collection, operations: body } = request;
  const storage = collection.documents as unknown as DocumentStorage;
  const journals = [journal(storage._data), journal(storage._index)];
  const ridCount = storage._ridCount;
  const results: OperationResult[] = [];
  // Azure takes the batch's partition key from the request header; operations need not repeat it.
  const batchKey = headerValue(req.headers['x-ms-documentdb-partitionkey']);
  asOneChange(collection, () => {
    try {
      for (const operation of body as BatchOperation[]) {
        const result = runOperation(
          collection,
          operation.partitionKey === undefined && batchKey !== undefined ? { ...operation, partitionKey: batchKey } : operation,
        );
        results.push(result);
        if (result.statusCode >= 400) break;
      }
    } finally {
      const failedAt = results.findIndex((r) => r.statusCode >= 400);
      for (const j of journals) j.close(failedAt >= 0);
      if (failedAt >= 0) storage._ridCount = ridCount;
    }
    return { result: undefined, committed: results.every((r) => r.statusCode < 400) };
  });
  const failed = results.findIndex((r) => r.statusCode >= 400);
  if (failed < 0) return results.map(toOperationResponse);
  res.statusCode = 207;
  return body.map((_, i) => (i === failed ? { statusCode: results[i]?.statusCode, requestCharge: 1 } : { statusCode: 424, requestCharge: 0 }));
}

/**
 * The container and operations of a batch or bulk request, or the refusal to answer with: 404 for a
 * missing container, 400 unless the body is an array of 1 to 100 operations.
 */
export async function readOperations(
  account: Account,
  req: IncomingMessage,
  res: ServerResponse,
  params: { dbId: string; collId: string },
  what: 'a batch' | 'a bulk request',
): Promise<{ collection: Collection; operations: BatchOperation[] } | { refusal: unknown }> {
  const body: unknown = await readJson(req);
  const collection = account.database(params.dbId).collection(params.collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return { refusal: { code: 'NotFound', message: `collection ${params.collId} does not exist` } };
  }
  if (!Array.isArray(body) || body.length === 0 || body.length > 100) {
    res.statusCode = 400;
    return { refusal: { code: 'BadRequest', message: `${what} is an array of 1 to 100 operations` } };
  }
  return { collection, operations: body as BatchOperation[] };
}

const absent = Symbol('absent');

/**
 * Records the first earlier value of every key a batch writes or deletes, so that a failed batch
 * puts back exactly those: O(keys touched), where copying the collection was O(documents).
 * The batch runs synchronously, so nothing else writes while the journal is open.
 */
function journal<K, V>(map: Map<K, V>): { close(rollback: boolean): void } {
  const before = new Map<K, V | typeof absent>();
  const remember = (key: K) => {
    if (!before.has(key)) before.set(key, map.has(key) ? (map.get(key) as V) : absent);
  };
  const own = map as Map<K, V> & { set: Map<K, V>['set']; delete: Map<K, V>['delete'] };
  own.set = (key: K, value: V) => {
    remember(key);
    return Map.prototype.set.call(map, key, value) as Map<K, V>;
  };
  own.delete = (key: K) => {
    remember(key);
    return Map.prototype.delete.call(map, key);
  };
  return {
    close(rollback: boolean) {
      delete (own as Partial<typeof own>).set;
      delete (own as Partial<typeof own>).delete;
      if (!rollback) return;
      for (const [key, value] of before) {
        if (value === absent) map.delete(key);
        else map.set(key, value);
      }
    },
  };
}

/** One operation of a transactional batch or a bulk request, checked as its single request would be. */
export function runOperation(collection: Collection, operation: BatchOperation): OperationResult {
  const input = operation as never;
  const resource = operation.resourceBody;
  const writesItem = operation.operationType === 'Create' || operation.operationType === 'Upsert' || operation.operationType === 'Replace';
  const problem = writesItem && typeof resource === 'object' && resource !== null ? itemProblem(resource as Record<string, unknown>) : undefined;
  if (problem !== undefined) return { statusCode: 400, body: { code: 'BadRequest', message: problem } };
  switch (operation.operationType) {
    case 'Create':
      return documentOperations.createOperation(collection, input);
    case 'Upsert':
      return documentOperations.upsertOperation(collection, input);
    case 'Read':
      return documentOperations.readOperation(collection, input);
    case 'Delete':
      return documentOperations.deleteOperation(collection, input);
    case 'Replace':
      return documentOperations.replaceOperation(collection, input);
    case 'Patch': {
      const patch = (operation.resourceBody ?? {}) as { operations?: unknown; condition?: unknown };
      return conditionalPatch(collection, {
        id: String(operation.id),
        partitionKey: operation.partitionKey as string | undefined,
        ifMatch: operation.ifMatch as string | undefined,
        operations: patch.operations,
        condition: patch.condition,
      });
    }
    default:
      return { statusCode: 400, body: { message: `operation type ${String(operation.operationType)} is not supported in a batch` } };
  }
}

function headerValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

function toOperationResponse(result: OperationResult) {
  const etag = (result.body as { _etag?: string } | undefined)?._etag;
  return { statusCode: result.statusCode, requestCharge: 1, eTag: etag, resourceBody: result.body };
}
