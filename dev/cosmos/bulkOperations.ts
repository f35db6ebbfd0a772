import type { IncomingMessage, ServerResponse } from 'node:http';
import type Account from '@vercel/cosmosdb-server/lib/account';
import readJson from '@vercel/cosmosdb-server/lib/json';
import isTrueHeader from '@vercel/cosmosdb-server/lib/true-header';
import { runOperation } from './atomicBatch.js';
import type { BatchOperation } from './atomicBatch.js';

/**
 * A bulk request (`container.items.bulk`, a batch that is not atomic): each operation applies on its
 * own, checked as its single request would be (an item `ttl` of -10 is 400), patch included. After a
 * failure the rest are 424 unless `x-ms-cosmos-batch-continue-on-error` says to go on. The library's
 * handler took no patch and no validation.
 */
export async function handleBulk(account: Account, req: IncomingMessage, res: ServerResponse, params: { dbId: string; collId: string }): Promise<unknown> {
  const body: unknown = await readJson(req);
  const collection = account.database(params.dbId).collection(params.collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return { code: 'NotFound', message: `collection ${params.collId} does not exist` };
  }
  if (!Array.isArray(body) || body.length === 0 || body.length > 100) {
    res.statusCode = 400;
    return { code: 'BadRequest', message: 'a bulk request is an array of 1 to 100 operations' };
  }
  const continueOnError = isTrueHeader(req, 'x-ms-cosmos-batch-continue-on-error');
  let failed = false;
  return (body as BatchOperation[]).map((operation) => {
    if (failed && !continueOnError) return { statusCode: 424, requestCharge: 0 };
    const result = runOperation(collection, operation);
    if (result.statusCode >= 400) {
      failed = true;
      return { statusCode: result.statusCode, requestCharge: 0 };
    }
    const etag = (result.body as { _etag?: string } | undefined)?._etag;
    return { statusCode: result.statusCode, requestCharge: 1, eTag: etag, resourceBody: result.body };
  });
}
