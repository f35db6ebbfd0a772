import type { IncomingMessage, ServerResponse } from 'node:http';
import type Account from '@vercel/cosmosdb-server/lib/account';
import isTrueHeader from '@vercel/cosmosdb-server/lib/true-header';
import { readOperations, runOperation } from './atomicBatch.js';

/**
 * A bulk request (`container.items.bulk`, a batch that is not atomic): each operation applies on its
 * own, checked as its single request would be (an item `ttl` of -10 is 400), patch included. After a
 * failure the rest are 424 unless `x-ms-cosmos-batch-continue-on-error` says to go on. The library's
 * handler took no patch and no validation.
 */
export async function handleBulk(account: Account, req: IncomingMessage, res: ServerResponse, params: { dbId: string; collId: string }): Promise<unknown> {
  const request = await readOperations(account, req, res, params, 'a bulk request');
  if ('refusal' in request) return request.refusal;
  const { collection, operations } = request;
  const continueOnError = isTrueHeader(req, 'x-ms-cosmos-batch-continue-on-error');
  let failed = false;
  return operations.map((operation) => {
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
