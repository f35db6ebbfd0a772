import { requiredIndexedPaths } from '../../src/doctor/index.js';

/*
 * The request units Cosmos DB would charge for one store call, from Microsoft's published figures.
 * Used where no real account answers (the stand-in always reports 1 RU); against a real account
 * the bench reads `x-ms-request-charge` instead.
 *
 * Published (learn.microsoft.com):
 * - cosmos-db/understand-request-unit-consumption: a create is "5.0 (document size based) + 0.2 x
 *   indexed terms" for a 1 KB document; a replace deletes and inserts, "5.0 + 5.0 + 0.2 x modified
 *   terms x 2"; a point read of 1 KB is 1 RU; both grow with size by the table below (session or
 *   eventual consistency).
 * - cosmos-db/optimize-cost-reads-writes: a point read's only cost factor is the item's size; a
 *   replace costs about twice a create; a query's sample metrics: one ~10 KB item returned, 3.19 RU.
 * - cosmos-db/index-policy: `id` and `_ts` are always indexed; the partition key is not unless
 *   included. This container indexes only `requiredIndexedPaths` (infra/modules/cosmos.bicep).
 * - The SDK reports a charge per operation of a transactional batch (OperationResponse.requestCharge);
 *   the batch's charge is their sum.
 *
 * Assumed (nothing published): a call that fails on its condition (a read's 404, a create's 409, a
 * replace's 412 or 404) costs a point read; in a batch that fails, the operations before the failing
 * one ran and are charged, those after it (424) did not; a query in one partition costs 2 RU plus
 * a point read of each document it returns (3 RU for one small document, near the published
 * sample). Cosmos adds system properties (`_rid`, `_self`, `_etag`, `_attachments`, `_ts`) of about
 * `systemPropertiesBytes` to every stored document. Single region, session consistency.
 */

/** Published size steps: KB -> [point read RU, write RU]. Between two steps, linear; below 1 KB, the 1 KB step. */
const bySize: readonly (readonly [number, number, number])[] = [
  [1, 1.0, 4.95],
  [2, 1.04, 6.29],
  [4, 1.14, 6.67],
  [8, 1.33, 7.04],
  [16, 1.67, 9.52],
  [32, 2.19, 11.23],
  [64, 4.76, 22.67],
  [128, 9.95, 48.19],
  [256, 20.28, 98.29],
  [512, 40.95, 184.57],
  [1024, 145.9, 625],
  [2048, 291.8, 1250],
];
const writeOf1Kb = 5.0;
const perIndexedTerm = 0.2;
const failedCall = 1;
const queryBase = 2;
export const systemPropertiesBytes = 190;
const alwaysIndexed = ['id', '_ts'];
const indexedFields = requiredIndexedPaths.map((path) => path.slice(1, -2));

type Json = Readonly<Record<string, unknown>>;

/** What one store call did, as the metering store saw it. */
export type MeteredCall =
  | { readonly kind: 'read'; readonly found: Json | undefined }
  | { readonly kind: 'query'; readonly found: readonly Json[] }
  | { readonly kind: 'commit'; readonly writes: readonly MeteredWrite[]; readonly failedAt: number | undefined };

export type MeteredWrite =
  | { readonly kind: 'create'; readonly document: Json }
  /** `previous` is the version last seen; unknown, every indexed term counts as changed. */
  | { readonly kind: 'replace'; readonly document: Json; readonly previous: Json | undefined };

/** The JSON body's size in UTF-8 bytes, without the system properties Cosmos adds. */
export function bodyBytes(document: Json): number {
  return Buffer.byteLength(JSON.stringify(withoutSystemProperties(document)), 'utf8');
}

export function withoutSystemProperties(document: Json): Json {
  return Object.fromEntries(Object.entries(document).filter(([key]) => !['_rid', '_self', '_etag', '_attachments', '_ts'].includes(key)));
}

export function requestUnitsOf(call: MeteredCall): number {
  if (call.kind === 'read') return call.found ? pointRead(call.found) : failedCall;
  if (call.kind === 'query') return queryBase + call.found.reduce((sum, d) => sum + pointRead(d), 0);
  const ran = call.failedAt === undefined ? call.writes : call.writes.slice(0, call.failedAt);
  return ran.reduce((sum, w) => sum + writeCharge(w), 0) + (call.failedAt === undefined ? 0 : failedCall);
}

function pointRead(document: Json): number {
  return bySizeStep(document, 1);
}

function writeCharge(write: MeteredWrite): number {
  const sized = bySizeStep(write.document, 2) * (writeOf1Kb / bySize[0]![2]);
  if (write.kind === 'create') return sized + perIndexedTerm * indexedTerms(write.document).length;
  return 2 * sized + 2 * perIndexedTerm * changedTerms(write.previous, write.document);
}

/** Linear between the published steps, by the stored size in KB; past the last (Cosmos DB stores at most 2 MB), its line goes on. */
function bySizeStep(document: Json, column: 1 | 2): number {
  const kb = (bodyBytes(document) + systemPropertiesBytes) / 1024;
  const found = bySize.findIndex(([size]) => size >= kb);
  const upper = found < 0 ? bySize.length - 1 : found;
  if (upper === 0) return bySize[0]![column];
  const [lowKb, lowRu] = [bySize[upper - 1]![0], bySize[upper - 1]![column]];
  const [highKb, highRu] = [bySize[upper]![0], bySize[upper]![column]];
  return lowRu + ((highRu - lowRu) * (kb - lowKb)) / (highKb - lowKb);
}

/** The indexed scalar values of a document: `id`, `_ts` and the policy's top-level paths. */
function indexedTerms(document: Json): string[] {
  const present = indexedFields.filter((field) => isScalar(document[field]));
  return [...alwaysIndexed, ...present];
}

/** `_ts` changes with every write; the others when their value does. */
function changedTerms(previous: Json | undefined, next: Json): number {
  if (!previous) return indexedTerms(next).length;
  const fields = new Set([...indexedFields.filter((f) => isScalar(previous[f])), ...indexedFields.filter((f) => isScalar(next[f]))]);
  return 1 + [...fields].filter((f) => previous[f] !== next[f]).length;
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}
