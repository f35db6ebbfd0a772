import { createHash } from 'node:crypto';

/** Cosmos DB refuses longer ids; counted in UTF-16 units, which is never fewer than characters. */
export const maxCosmosIdLength = 255;

/**
 * Characters escaped inside an id part: the four Cosmos rejects (`/ \ ? #`), control characters,
 * and our own `%` (escape), `|` (separator) and `*` (hash marker), so that escaping is injective
 * and an escaped part can never be mistaken for a separator or a hashed id.
 */
const escapedCharacters = /[/\\?#%|*\p{Cc}]/gu;

export function escapeIdPart(part: string): string {
  return part.replace(escapedCharacters, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * A deterministic, collision-free Cosmos id for `namespace|part|part...`. Short ids stay readable;
 * an id that would exceed 255 characters keeps its namespace and replaces the parts with
 * `*` + SHA-256 of the escaped parts. No escaped part contains `*`, so the two forms never meet,
 * and two long ids collide only if SHA-256 does.
 */
export function documentId(namespace: string, ...parts: string[]): string {
  const body = parts.map(escapeIdPart).join('|');
  const readable = `${namespace}|${body}`;
  if (readable.length <= maxCosmosIdLength) return readable;
  return `${namespace}|*${createHash('sha256').update(body, 'utf8').digest('hex')}`;
}

/** True when `id` can be stored as a Cosmos id as it is. */
export function isCosmosSafeId(id: string): boolean {
  return id.length > 0 && id.length <= maxCosmosIdLength && !/[/\\?#\p{Cc}]/u.test(id);
}
