/**
 * The `Idempotency-Key` header as the IETF httpapi draft defines it: a Structured Field sf-string
 * (RFC 8941 section 3.3.3), a double-quoted string of printable ASCII with `\` and `"` escaped.
 * One module for both sides: our carrier client writes it, the carrier stand-in reads it, and our
 * intake reads a quoted key with it (readIdempotencyKey, which also takes Stripe's bare token), so
 * they can never disagree on the encoding.
 */

/** Returns the key, or undefined when the value is not one non-empty sf-string (the draft's 400). */
export function parseIdempotencyKey(value: string | null | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return undefined;
  let key = '';
  for (let i = 1; i < text.length - 1; i += 1) {
    const ch = text[i] ?? '';
    const code = ch.charCodeAt(0);
    if (code < 0x20 || code > 0x7e) return undefined;
    if (ch === '"') return undefined;
    if (ch === '\\') {
      const next = text[i + 1];
      // `i + 1` may be the closing quote: `"a\"` is an unterminated string, not the key `a"`.
      if ((next !== '"' && next !== '\\') || i + 1 === text.length - 1) return undefined;
      key += next;
      i += 1;
      continue;
    }
    key += ch;
  }
  return key === '' ? undefined : key;
}

/**
 * The header for a key: quoted, with `\` and `"` escaped. An sf-string holds printable ASCII only,
 * so anything else is percent-encoded (the same key always gives the same header).
 */
export function idempotencyKeyHeader(key: string): string {
  return `"${idempotencyKeyValue(key).replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;
}

/** The key as a server that parsed our header stores it, for a look-up in a query string. */
export function idempotencyKeyValue(key: string): string {
  return key.replace(/[^\x20-\x7e]/gu, (ch) => encodeURIComponent(ch));
}
