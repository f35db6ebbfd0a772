import type Collection from '@vercel/cosmosdb-server/lib/account/collection';
import { MinHeap } from '../emulator-kit/minHeap.js';

interface StoredDoc {
  _rid: string;
  _etag: string;
  _ts: number;
  ttl?: unknown;
  [field: string]: unknown;
}

interface DocumentsInternals {
  _set(data: StoredDoc): StoredDoc;
  _data: Map<string, { read(): StoredDoc | undefined }>;
  _getPartition(data: StoredDoc): unknown;
  delete(idOrRid: string, partition: unknown): void;
}

interface Expiry {
  readonly atMs: number;
  readonly rid: string;
  readonly etag: string;
}

interface Tracking {
  expiries: MinHeap<Expiry>;
  /** False once the container (or its database) is deleted: then nothing of it may be kept. */
  readonly isLive: () => boolean;
}

const tracked = new Map<Collection, Tracking>();

/**
 * Time-to-live as Cosmos DB applies it: with the container's `defaultTtl` unset, nothing expires;
 * otherwise a document lives `ttl ?? defaultTtl` seconds after its last write (`_ts`), and -1 means
 * forever. Every write of the collection is observed at its one storage point, so expiry is exact.
 */
export function trackTimeToLive(collection: Collection, isLive: () => boolean): void {
  if (tracked.has(collection)) return;
  const tracking: Tracking = { expiries: newHeap(), isLive };
  tracked.set(collection, tracking);
  const documents = collection.documents as unknown as DocumentsInternals;
  const store = documents._set.bind(documents);
  documents._set = (data: StoredDoc) => {
    const stored = store(data);
    const atMs = expiresAtMs(collection, stored);
    if (atMs !== undefined) tracking.expiries.push({ atMs, rid: stored._rid, etag: stored._etag });
    // Each rewrite of a document leaves its previous expiry behind until that time comes: with a long
    // ttl and a hot document the heap would grow with every write. Rebuilt from the live documents.
    if (tracking.expiries.size > 2 * documents._data.size + 1024) tracking.expiries = rebuilt(collection, documents);
    return stored;
  };
}

/** What the bookkeeping holds, for the test that keeps it bounded. */
export function timeToLiveBookkeeping(): { readonly collections: number; readonly expiries: number } {
  let expiries = 0;
  for (const t of tracked.values()) expiries += t.expiries.size;
  return { collections: tracked.size, expiries };
}

function newHeap(): MinHeap<Expiry> {
  return new MinHeap<Expiry>((a, b) => a.atMs < b.atMs);
}

function rebuilt(collection: Collection, documents: DocumentsInternals): MinHeap<Expiry> {
  const heap = newHeap();
  for (const item of documents._data.values()) {
    const doc = item.read();
    const atMs = doc && expiresAtMs(collection, doc);
    if (doc && atMs !== undefined) heap.push({ atMs, rid: doc._rid, etag: doc._etag });
  }
  return heap;
}

/** Removes what has expired, before a request can see it: reads, queries and creates all behave at once. */
export function purgeExpired(collection: Collection, nowMs = Date.now()): number {
  const expiries = tracked.get(collection)?.expiries;
  const documents = collection.documents as unknown as DocumentsInternals;
  let purged = 0;
  for (let next = expiries?.peek(); next && next.atMs <= nowMs; next = expiries?.peek()) {
    expiries?.pop();
    const current = documents._data.get(next.rid)?.read();
    // A document rewritten since has a new etag and its own, later, expiry.
    if (current && current._etag === next.etag) {
      documents.delete(next.rid, documents._getPartition(current));
      purged += 1;
    }
  }
  return purged;
}

/** The background sweep: expired documents leave memory even when nobody asks for them. */
export function purgeAllExpired(nowMs = Date.now()): number {
  let purged = 0;
  for (const [collection, tracking] of tracked) {
    // A deleted container's documents would otherwise stay reachable from here for ever.
    if (!tracking.isLive()) tracked.delete(collection);
    else purged += purgeExpired(collection, nowMs);
  }
  return purged;
}

function expiresAtMs(collection: Collection, doc: StoredDoc): number | undefined {
  const defaultTtl = (collection.read() as { defaultTtl?: unknown } | undefined)?.defaultTtl;
  if (typeof defaultTtl !== 'number') return undefined;
  const ttl = typeof doc.ttl === 'number' ? doc.ttl : defaultTtl;
  return ttl > 0 ? (doc._ts + ttl) * 1000 : undefined;
}
