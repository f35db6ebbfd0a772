import type { IncomingMessage, ServerResponse } from 'node:http';
import type Account from '@vercel/cosmosdb-server/lib/account';

interface DocumentsInternals {
  _data: Map<string, { read(): ({ _rid: string } & Record<string, unknown>) | undefined }>;
  _getPartition(data: Record<string, unknown>): unknown;
  delete(idOrRid: string, partition: unknown): void;
}

const route = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/operations\/partitionkeydelete\/?$/i;

/** The database and container of `POST /dbs/{db}/colls/{coll}/operations/partitionkeydelete`, else undefined. */
export function partitionKeyDeleteTarget(req: IncomingMessage): { dbId: string; collId: string } | undefined {
  if (req.method !== 'POST') return undefined;
  const match = route.exec((req.url ?? '').split('?')[0] ?? '');
  return match ? { dbId: decodeURIComponent(match[1] ?? ''), collId: decodeURIComponent(match[2] ?? '') } : undefined;
}

/**
 * `container.deleteAllItemsForPartitionKey(key)`: every item of one logical partition goes. Cosmos DB
 * does this in the background and answers at once; here it is done before the answer, which a caller
 * that waits for it cannot tell apart.
 */
export function handlePartitionKeyDelete(account: Account, req: IncomingMessage, res: ServerResponse, params: { dbId: string; collId: string }): unknown {
  req.resume();
  const collection = account.database(params.dbId).collection(params.collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return { code: 'NotFound', message: `Entity with the specified id does not exist in the system. (collection ${params.collId})` };
  }
  const header = req.headers['x-ms-documentdb-partitionkey'];
  let key: unknown;
  try {
    key = JSON.parse(Array.isArray(header) ? (header[0] ?? '') : (header ?? '')) as unknown;
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== 1) {
    res.statusCode = 400;
    return { code: 'BadRequest', message: 'A partition key delete needs the partition key value in the x-ms-documentdb-partitionkey header, e.g. ["WA"].' };
  }
  const documents = collection.documents as unknown as DocumentsInternals;
  const wanted = JSON.stringify(key[0]);
  for (const stored of [...documents._data.values()]) {
    const doc = stored.read();
    if (doc && JSON.stringify(documents._getPartition(doc) ?? {}) === wanted) documents.delete(doc._rid, documents._getPartition(doc));
  }
  res.statusCode = 200;
  return {};
}
