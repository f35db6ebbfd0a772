import type { IncomingMessage, ServerResponse } from 'node:http';
import type Account from '@vercel/cosmosdb-server/lib/account';
import readItems from '@vercel/cosmosdb-server/lib/handler/_read-items';
import readJson from '@vercel/cosmosdb-server/lib/json';
import { parsePartitionKey } from '@vercel/cosmosdb-server/lib/utils/get-partition-from-header';

interface QueryInternals {
  _data: Map<string, { read(): Record<string, unknown> | undefined }>;
  _set(data: Record<string, unknown>): unknown;
  _getPartition(data: Record<string, unknown>): unknown;
  _getPartitionKeyPath(): string[];
  _getQuery(sql: string): { exec(data: unknown[], options: Record<string, unknown>): unknown };
  _userDefinedFunctions(): unknown;
}

/**
 * A query sent with a partition key (the SDK's `partitionKey` option, the header
 * `x-ms-documentdb-partitionkey`) sees only that logical partition, as in Cosmos DB; the library
 * scans every partition. Aggregates and paging then count what the partition holds.
 */
export async function handlePartitionScopedQuery(
  account: Account,
  req: IncomingMessage,
  res: ServerResponse,
  params: { dbId: string; collId: string },
  /** `nothing` answers a query-plan request without reading a single document. */
  scope: 'partition' | 'nothing' = 'partition',
): Promise<unknown> {
  const header = req.headers['x-ms-documentdb-partitionkey'];
  const partition = parsePartitionKey(Array.isArray(header) ? (header[0] ?? '') : (header ?? ''), undefined);
  return readItems(req, res, 'Documents', async ({ continuation, maxItemCount }) => {
    const body = (await readJson(req)) as { query?: string; parameters?: unknown };
    if (!body.query) {
      res.statusCode = 400;
      return { message: 'missing query' };
    }
    const collection = account.database(params.dbId).collection(params.collId);
    if (!collection.read()) return null;
    const documents = collection.documents as unknown as QueryInternals;
    // The key path once per query, not once per document: a scan of a large container stays cheap
    // (Cosmos DB serves a partition-scoped query from its index; a per-document path split made
    // the stand-in's cost grow with the whole container).
    const path = documents._getPartitionKeyPath();
    const [only] = path;
    const partitionOf =
      path.length === 1 && only !== undefined ? (doc: Record<string, unknown>) => doc[only] : (doc: Record<string, unknown>) => documents._getPartition(doc);
    const data: Record<string, unknown>[] = [];
    for (const rid of scope === 'nothing' ? [] : ridsInPartition(documents, partitionOf, partition)) {
      const doc = documents._data.get(rid)?.read();
      if (doc && partitionOf(doc) === partition) data.push(doc);
    }
    const compositeIndexes = (collection.read() as { indexingPolicy?: { compositeIndexes?: unknown } }).indexingPolicy?.compositeIndexes ?? [];
    return documents._getQuery(body.query).exec(data, {
      parameters: body.parameters,
      udf: documents._userDefinedFunctions(),
      maxItemCount,
      continuation,
      compositeIndexes,
    });
  });
}

const partitionIndexes = new WeakMap<QueryInternals, Map<unknown, Set<string>>>();

/**
 * The rids each logical partition has held, in the order the library keeps them (a replace moves a
 * document to the end). Built once per collection, then kept by every write the library makes
 * (they all go through `_set`), so a query reads its own partition, not the whole container: the
 * bench's preloaded container (`--preload 10x`) would otherwise time the stand-in's scan. A rid may
 * be stale (the document deleted, expired, or its batch rolled back and the rid reused elsewhere):
 * the caller looks each one up and checks its partition.
 */
function ridsInPartition(documents: QueryInternals, partitionOf: (doc: Record<string, unknown>) => unknown, partition: unknown): Iterable<string> {
  let index = partitionIndexes.get(documents);
  if (!index) {
    const built = new Map<unknown, Set<string>>();
    const add = (doc: Record<string, unknown> | undefined) => {
      if (!doc) return;
      const key = partitionOf(doc);
      const rids = built.get(key) ?? new Set<string>();
      rids.delete(String(doc._rid));
      built.set(key, rids.add(String(doc._rid)));
    };
    for (const item of documents._data.values()) add(item.read());
    const set = documents._set.bind(documents);
    documents._set = (doc) => {
      const stored = set(doc);
      add(doc);
      return stored;
    };
    partitionIndexes.set(documents, built);
    index = built;
  }
  return index.get(partition) ?? [];
}
