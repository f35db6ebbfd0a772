import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import createCollection from '@vercel/cosmosdb-server/lib/handler/create-collection';
import createDocument from '@vercel/cosmosdb-server/lib/handler/create-document';
import replaceCollection from '@vercel/cosmosdb-server/lib/handler/replace-collection';
import replaceDocument from '@vercel/cosmosdb-server/lib/handler/replace-document';
import upsertDocument from '@vercel/cosmosdb-server/lib/handler/upsert-document';
import { withIndexingPolicyDefaults } from './indexingPolicy.js';

export interface ValidationFailure {
  readonly statusCode: 400;
  readonly body: { readonly code: 'BadRequest'; readonly message: string };
}

const documentWrites = new Set<unknown>([createDocument, replaceDocument, upsertDocument]);
const containerWrites = new Set<unknown>([createCollection, replaceCollection]);

/** True for the requests whose bodies Cosmos DB validates and the library does not. */
export function needsValidation(handler: unknown): boolean {
  return documentWrites.has(handler) || containerWrites.has(handler);
}

/**
 * Reads the body once, checks what Azure refuses with 400 and the library accepts, and returns a
 * request the library's handler can read the body from again.
 */
export async function validateWrite(handler: unknown, req: IncomingMessage): Promise<{ request: IncomingMessage; failure?: ValidationFailure }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const replay = Object.assign(Readable.from([raw]), { headers: req.headers, method: req.method, url: req.url }) as unknown as IncomingMessage;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { request: replay }; // the handler answers malformed JSON itself
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { request: replay };
  const problem = documentWrites.has(handler) ? itemProblem(body) : containerProblem(body);
  if (problem !== undefined) return { request: replay, failure: { statusCode: 400, body: { code: 'BadRequest', message: problem } } };
  if (documentWrites.has(handler)) return { request: replay };
  // A container is stored with the indexing policy Cosmos DB would give it.
  const stored = Buffer.from(JSON.stringify(withIndexingPolicyDefaults(body)), 'utf8');
  const headers = { ...req.headers, 'content-length': String(stored.length) };
  return { request: Object.assign(Readable.from([stored]), { headers, method: req.method, url: req.url }) as unknown as IncomingMessage };
}

/** An item's `ttl`, when present, is a whole number of seconds: -1 (never) or at least 1. Batches and bulk check theirs too. */
export function itemProblem(body: Record<string, unknown>): string | undefined {
  if (!('ttl' in body)) return undefined;
  return validTtl(body.ttl)
    ? undefined
    : `The value of the 'ttl' property (${JSON.stringify(body.ttl)}) is invalid: it must be -1 or a whole number of seconds from 1 to ${maxTtlSeconds}.`;
}

function containerProblem(body: Record<string, unknown>): string | undefined {
  if ('defaultTtl' in body && !validTtl(body.defaultTtl)) {
    return `The value of 'defaultTtl' (${JSON.stringify(body.defaultTtl)}) is invalid: it must be -1 or a whole number of seconds from 1 to ${maxTtlSeconds}.`;
  }
  const paths = (body.partitionKey as { paths?: unknown } | undefined)?.paths;
  if (paths === undefined) return undefined;
  if (!Array.isArray(paths) || paths.length === 0) {
    return `The partition key definition is invalid: 'paths' must be a list of paths starting with '/', e.g. ['/orderId'] (got ${JSON.stringify(paths)}).`;
  }
  const refused = paths.find((p) => typeof p !== 'string' || !validPartitionKeyPath(p));
  if (refused !== undefined) {
    // Cosmos DB's own wording, which callers match on.
    return `The partition key component definition path '${String(refused)}' could not be accepted, failed near position '0'. Partition key paths must contain only valid characters and not contain a trailing slash or wildcard character.`;
  }
  return undefined;
}

/** `/a`, `/a/b`, `/"a b"`: each segment a property name (quoted when it has spaces), no wildcard, no trailing slash. */
function validPartitionKeyPath(path: string): boolean {
  return /^(\/("[^"]+"|[^\s/*?"]+))+$/.test(path);
}

/** Cosmos DB's ttl is a 32-bit number of seconds: -1 (never), or 1 to 2147483647 (about 68 years). */
const maxTtlSeconds = 2_147_483_647;

function validTtl(value: unknown): boolean {
  return Number.isInteger(value) && ((value as number) === -1 || ((value as number) >= 1 && (value as number) <= maxTtlSeconds));
}
