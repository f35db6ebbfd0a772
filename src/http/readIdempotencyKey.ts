import { parseIdempotencyKey } from './idempotencyKeyHeader.js';

/** The Idempotency-Key header as read: a key, none, or a value that is not one (with what a client is told). */
export type IdempotencyKeyReading =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'missing' }
  | {
      readonly kind: 'malformed';
      readonly title: string;
      readonly detail: string;
      /** A key the previous release accepted (an sf-string of spaces): its requests' retries are still answered from what it stored. */
      readonly previousReleaseKey?: string;
    };

/** Stripe's limit; the draft sets none. Longer keys are a client bug, not an identity. */
export const maxIdempotencyKeyLength = 255;

const malformedTitle = 'Idempotency-Key header malformed';
const example = '8e03978e-40d5-43e8-bc93-6894a57f9324';

/**
 * The key as clients send it: Stripe's bare token (`Idempotency-Key: 8e03978e…`: visible ASCII
 * without `"`, `\` or a comma) or the IETF draft's sf-string (`"8e03978e…"`). Both give the same
 * key, `abc` and `"abc"` alike, so a record stored under a quoted key is found for either form.
 * A comma outside quotes means several values (two headers arrive joined by ", "): refused, as
 * is a control character anywhere, which no client puts in a key on purpose.
 */
export function readIdempotencyKey(value: string | null): IdempotencyKeyReading {
  const text = value?.trim() ?? '';
  if (text === '') return { kind: 'missing' };
  const control = [...text].findIndex((ch) => isControl(ch.charCodeAt(0)));
  if (control >= 0)
    return malformed(`the Idempotency-Key holds a control character (${codePoint(text, control)}) at position ${control + 1}; a key is visible ASCII only`);
  if (hasCommaOutsideQuotes(text)) return malformed(`the Idempotency-Key holds several values; send one key, such as ${example}`);
  const read = text.startsWith('"') ? readSfString(text) : readBareToken(text);
  if (read.kind !== 'key' || read.key.length <= maxIdempotencyKeyLength) return read;
  return {
    kind: 'malformed',
    title: 'Idempotency-Key header too long',
    detail: `the Idempotency-Key is ${read.key.length} characters; at most ${maxIdempotencyKeyLength} are allowed`,
  };
}

function readSfString(text: string): IdempotencyKeyReading {
  if (text === '""') return malformed(`the Idempotency-Key is an empty sf-string; send a key, such as "${example}"`);
  const key = parseIdempotencyKey(text);
  // Spaces are all an sf-string may hold of white space: a blank key, which every careless client would share.
  if (key !== undefined && key.trim() === '')
    return {
      kind: 'malformed',
      title: malformedTitle,
      detail: `the Idempotency-Key is an sf-string of spaces only; send a key, such as "${example}"`,
      previousReleaseKey: key,
    };
  if (key !== undefined) return { kind: 'key', key };
  return malformed(
    `a quoted Idempotency-Key must be one non-empty sf-string (RFC 8941): printable ASCII in double quotes, with \\ and " escaped, such as "${example}"`,
  );
}

function readBareToken(text: string): IdempotencyKeyReading {
  const at = [...text].findIndex((ch) => ch === ' ' || ch === '"' || ch === '\\' || ch.charCodeAt(0) > 0x7e);
  if (at < 0) return { kind: 'key', key: text };
  // Stryker disable next-line StringLiteral: `at` was found among these very characters, so the fallback (for the index type) is never taken
  const ch = [...text][at] ?? '';
  // Stryker disable next-line EqualityOperator: the character found is a space, " or a backslash (all below 0x7e) or above 0x7e, never 0x7e itself
  const what = ch === ' ' ? 'a space' : ch.charCodeAt(0) > 0x7e ? `the non-ASCII ${codePoint(text, at)}` : ch;
  return malformed(
    `the Idempotency-Key holds ${what} at position ${at + 1}; send a bare key of visible ASCII without spaces, " or \\ (such as ${example}), or quote it as an sf-string (RFC 8941)`,
  );
}

/** Outside a quoted string; `\"` inside one does not end it. */
function hasCommaOutsideQuotes(text: string): boolean {
  let quoted = false;
  // Stryker disable next-line EqualityOperator: one step past the end reads undefined, which is no quote, backslash or comma
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (quoted && ch === '\\') i += 1;
    else if (ch === '"') quoted = !quoted;
    else if (ch === ',' && !quoted) return true;
  }
  return false;
}

/** C0, DEL and C1: Unicode's control characters. */
function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

function codePoint(text: string, index: number): string {
  // Stryker disable next-line StringLiteral: every caller passes the index of a character it found in this text, so the fallback (for the index type) is never taken
  return `U+${(([...text][index] ?? '').codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function malformed(detail: string): IdempotencyKeyReading {
  return { kind: 'malformed', title: malformedTitle, detail };
}
