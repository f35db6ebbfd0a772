/**
 * The `Idempotency-Key` header as the IETF httpapi draft defines it: a Structured Field sf-string
 * (RFC 8941 section 3.3.3), a double-quoted string of printable ASCII with `\` and `"` escaped.
 * Returns the key, or undefined when the value is not an sf-string (the draft's 400).
 */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
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
      if (next !== '"' && next !== '\\') return undefined;
      key += next;
      i += 1;
      continue;
    }
    key += ch;
  }
  return key === '' ? undefined : key;
}
