import type { IncomingMessage, ServerResponse } from 'node:http';
import type Collection from '@vercel/cosmosdb-server/lib/account/collection';

interface StoredDoc {
  _rid: string;
  _ts: number;
  [field: string]: unknown;
}

interface DocumentsInternals {
  _set(data: StoredDoc): StoredDoc;
  _data: Map<string, { read(): StoredDoc | undefined }>;
  _getPartition(data: StoredDoc): unknown;
}

/**
 * A container's change feed in latest-version mode: every write takes the next logical sequence
 * number (LSN) of the container, and the feed lists each live document once, at the LSN of its
 * last write. `order` is kept in LSN order by deleting and re-inserting a document on each write,
 * so a read walks it once; deleted documents drop out (latest-version mode never shows deletes).
 */
interface Feed {
  lsn: number;
  readonly order: Map<string, number>;
  /** Set while a transactional batch runs: its writes take one LSN together, or none if it fails. */
  pending?: Set<string>;
}

/** Keyed weakly: a deleted container's feed goes with it. */
const feeds = new WeakMap<Collection, Feed>();

/** The stand-in has one physical partition per container, as Azure has for a container under 10,000 RU/s and 50 GB. */
export const onlyPartitionKeyRange = { id: '0', minInclusive: '', maxExclusive: 'FF' } as const;

export function trackChanges(collection: Collection): void {
  if (feeds.has(collection)) return;
  const feed: Feed = { lsn: 0, order: new Map() };
  feeds.set(collection, feed);
  const documents = collection.documents as unknown as DocumentsInternals;
  const store = documents._set.bind(documents);
  documents._set = (data: StoredDoc) => {
    const stored = store(data);
    if (feed.pending) feed.pending.add(stored._rid);
    else stamp(feed, [stored._rid]);
    return stored;
  };
}

function stamp(feed: Feed, rids: Iterable<string>): void {
  feed.lsn += 1;
  for (const rid of rids) {
    feed.order.delete(rid);
    feed.order.set(rid, feed.lsn);
  }
}

/**
 * Runs a transactional batch's writes as one change: in Azure a batch commits at one LSN and the
 * change feed never splits it across pages. A batch that fails leaves no trace in the feed.
 */
export function asOneChange<T>(collection: Collection, run: () => { result: T; committed: boolean }): T {
  const feed = feeds.get(collection);
  if (!feed) return run().result;
  feed.pending = new Set();
  try {
    const { result, committed } = run();
    if (committed && feed.pending.size > 0) stamp(feed, feed.pending);
    return result;
  } finally {
    feed.pending = undefined;
  }
}

export const isChangeFeedRequest = (req: IncomingMessage): boolean => req.method === 'GET' && req.headers['a-im'] !== undefined;

/**
 * `GET .../docs` with `A-IM: Incremental Feed`, as the SDKs read the change feed: from the
 * beginning (no `If-None-Match`), from now (`If-None-Match: *`), from a point in time
 * (`If-Modified-Since`) or from a continuation (`If-None-Match: "<lsn>"`, the ETag of the last
 * page); for one partition key (`x-ms-documentdb-partitionkey`) or the container's one range
 * (`x-ms-documentdb-partitionkeyrangeid: 0`). A page ends after `x-ms-max-item-count` documents
 * but never inside one LSN. Nothing new is 304 Not Modified, with the ETag to ask again with.
 */
export function handleChangeFeed(collection: Collection, req: IncomingMessage, res: ServerResponse): unknown {
  const mode = String(req.headers['a-im']).toLowerCase();
  if (mode !== 'incremental feed') {
    res.statusCode = 400;
    return {
      code: 'BadRequest',
      message: `change feed mode ${JSON.stringify(req.headers['a-im'])} is not available in the stand-in: only latest version ("Incremental Feed")`,
    };
  }
  const rangeId = header(req, 'x-ms-documentdb-partitionkeyrangeid');
  if (rangeId !== undefined && rangeId !== onlyPartitionKeyRange.id) {
    res.statusCode = 410;
    res.setHeader('x-ms-substatus', '1002');
    return { code: 'Gone', message: `partition key range ${rangeId} does not exist (PartitionKeyRangeGone)` };
  }
  const epkMin = header(req, 'x-ms-start-epk');
  const epkMax = header(req, 'x-ms-end-epk');
  if ((epkMin !== undefined && epkMin !== onlyPartitionKeyRange.minInclusive) || (epkMax !== undefined && epkMax !== onlyPartitionKeyRange.maxExclusive)) {
    res.statusCode = 400;
    return {
      code: 'BadRequest',
      message: `feed range [${epkMin ?? ''}, ${epkMax ?? ''}) is narrower than a partition key range; the stand-in serves whole ranges and single partition keys`,
    };
  }
  trackChanges(collection);
  const feed = feeds.get(collection) as Feed;
  const documents = collection.documents as unknown as DocumentsInternals;
  const partitionKey = partitionKeyOf(header(req, 'x-ms-documentdb-partitionkey'));
  const ifNoneMatch = header(req, 'if-none-match');
  if (ifNoneMatch === '*') return notModified(res, feed.lsn);
  const after = ifNoneMatch === undefined ? 0 : Number(ifNoneMatch.replace(/"/g, ''));
  if (!Number.isInteger(after) || after < 0) {
    res.statusCode = 400;
    return { code: 'BadRequest', message: `If-None-Match ${JSON.stringify(ifNoneMatch)} is not a change feed continuation` };
  }
  const since = header(req, 'if-modified-since');
  const sinceSeconds = since === undefined ? undefined : Math.floor(Date.parse(since) / 1000);
  if (sinceSeconds !== undefined && Number.isNaN(sinceSeconds)) {
    res.statusCode = 400;
    return { code: 'BadRequest', message: `If-Modified-Since ${JSON.stringify(since)} is not an HTTP date` };
  }
  const maxItems = Number(header(req, 'x-ms-max-item-count') ?? '100');
  const limit = maxItems > 0 ? maxItems : Infinity;
  const page: StoredDoc[] = [];
  let pageLsn = after;
  for (const [rid, lsn] of feed.order) {
    if (lsn <= after) continue;
    if (page.length >= limit && lsn !== pageLsn) break;
    const doc = documents._data.get(rid)?.read();
    if (!doc) {
      feed.order.delete(rid);
      continue;
    }
    if (partitionKey !== undefined && JSON.stringify(documents._getPartition(doc)) !== JSON.stringify(partitionKey)) continue;
    if (sinceSeconds !== undefined && doc._ts < sinceSeconds) continue;
    page.push({ ...doc, _lsn: lsn });
    pageLsn = lsn;
  }
  // Nothing for this key or time up to the container's current LSN: continue from there.
  if (page.length === 0) return notModified(res, feed.lsn);
  res.setHeader('etag', `"${pageLsn}"`);
  res.setHeader('lsn', String(feed.lsn));
  res.setHeader('x-ms-item-count', String(page.length));
  return { _rid: (collection.read() as { _rid: string })._rid, Documents: page, _count: page.length };
}

function notModified(res: ServerResponse, lsn: number): unknown {
  res.statusCode = 304;
  res.setHeader('etag', `"${lsn}"`);
  res.setHeader('lsn', String(lsn));
  return undefined;
}

/**
 * `GET .../pkranges` with `A-IM`: the .NET SDK keeps its routing map current by reading the ranges
 * as a feed until it answers 304. The ranges never change here, so the ETag is fixed.
 */
export function handlePartitionKeyRangeFeed(collection: Collection, req: IncomingMessage, res: ServerResponse): unknown {
  const etag = '"1"';
  if (header(req, 'if-none-match') === etag) {
    res.statusCode = 304;
    res.setHeader('etag', etag);
    return undefined;
  }
  const { _rid } = collection.read() as { _rid: string };
  const stored = (collection.partitionKeyRanges as unknown as DocumentsInternals)._data;
  const ranges = [...stored.values()].map((range) => ({ ...range.read(), id: String(range.read()?.id) }));
  res.setHeader('etag', etag);
  res.setHeader('x-ms-item-count', String(ranges.length));
  return { _rid, PartitionKeyRanges: ranges, _count: ranges.length };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function partitionKeyOf(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  const parsed = JSON.parse(value) as unknown;
  return Array.isArray(parsed) ? parsed[0] : parsed;
}
