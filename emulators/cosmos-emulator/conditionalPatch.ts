import type { IncomingMessage, ServerResponse } from 'node:http';
import type Account from '@vercel/cosmosdb-server/lib/account';
import type Collection from '@vercel/cosmosdb-server/lib/account/collection';
import { patchOperation } from '@vercel/cosmosdb-server/lib/handler/_patch-operations';
import type { OperationResult } from '@vercel/cosmosdb-server/lib/handler/_document-operations';
import readJson from '@vercel/cosmosdb-server/lib/json';
import getPartitionFromHeader, { parsePartitionKey } from '@vercel/cosmosdb-server/lib/utils/get-partition-from-header';

export interface PatchInput {
  readonly id: string;
  readonly partitionKey?: string;
  readonly ifMatch?: string;
  readonly operations: unknown;
  readonly condition?: unknown;
}

/** Azure accepts at most 10 operations in one patch. */
const maxPatchOperations = 10;

/**
 * A patch as Cosmos DB applies it, alone or in a transactional batch: its `condition` (a filter such
 * as `from c where c.status = 'Active'`) must hold for the document, else 412. The library evaluates
 * the condition lower-cased, so a property or value with a capital letter never matched.
 */
export function conditionalPatch(collection: Collection, input: PatchInput): OperationResult {
  const operations = input.operations;
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > maxPatchOperations) {
    return badRequest(`a patch has 1 to ${maxPatchOperations} operations, got ${Array.isArray(operations) ? operations.length : 'none'}`);
  }
  if (input.condition !== undefined && input.condition !== null) {
    if (typeof input.condition !== 'string' || input.condition.trim() === '') return badRequest('the patch condition is not a query filter (from c where ...)');
    const document = collection.document(input.id, parsePartitionKey(input.partitionKey as string, input.id)).read() as
      { _rid?: string; _etag?: string } | undefined;
    if (!document) return { statusCode: 404, body: {} };
    if (input.ifMatch && input.ifMatch !== document._etag)
      return preconditionFailed('Operation cannot be performed because one of the specified precondition is not met.');
    const condition = input.condition.trim();
    const query = /^select\s/i.test(condition) ? condition : `SELECT * ${condition}`;
    let matching: { _rid?: string }[];
    try {
      matching = (collection.documents.query({ query, parameters: [] }, {}) as { result: { _rid?: string }[] }).result;
    } catch (error) {
      return badRequest(`the patch condition is not a valid query filter: ${(error as Error).message}`);
    }
    if (!matching.some((m) => m._rid === document._rid)) return preconditionFailed('One of the specified pre-condition is not met.');
  }
  return patchOperation(collection, {
    id: input.id,
    partitionKey: input.partitionKey,
    ifMatch: input.ifMatch,
    operations: operations as never,
  }) as OperationResult;
}

/** `PATCH /dbs/{db}/colls/{coll}/docs/{id}`: the operations as an array, or `{ operations, condition }`. */
export async function handlePatchDocument(
  account: Account,
  req: IncomingMessage,
  res: ServerResponse,
  params: { dbId: string; collId: string; docId: string },
): Promise<unknown> {
  const body = (await readJson(req)) as unknown;
  const collection = account.database(params.dbId).collection(params.collId);
  const wrapped = !Array.isArray(body) && typeof body === 'object' && body !== null ? (body as { operations?: unknown; condition?: unknown }) : undefined;
  const ifMatch = req.headers['if-match'];
  const result = conditionalPatch(collection, {
    id: params.docId,
    partitionKey: getPartitionFromHeader(req),
    ifMatch: Array.isArray(ifMatch) ? ifMatch[0] : ifMatch,
    operations: Array.isArray(body) ? body : wrapped?.operations,
    condition: wrapped?.condition,
  });
  res.statusCode = result.statusCode;
  return result.body;
}

function badRequest(message: string): OperationResult {
  return { statusCode: 400, body: { code: 'BadRequest', message } };
}

function preconditionFailed(message: string): OperationResult {
  return { statusCode: 412, body: { code: 'PreconditionFailed', message } };
}
