import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JSON Canonicalization Scheme) text of a JSON value: keys sorted, no white space,
 * numbers in their shortest round-trip form. Two producers' serialisations of the same payload
 * yield the same text, so key order or pretty-printing never makes a redelivery look different.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) {
    throw new TypeError('canonicalJson: the value has no JSON form');
  }
  return text;
}

/** SHA-256 (hex) of the canonical form of `{ type, payload }`: what "the same message" means. */
export function fingerprintPayload(type: string, payload: unknown): string {
  // Stryker disable next-line StringLiteral: '' is Node's default encoding for a string, utf8
  return createHash('sha256').update(canonicalJson({ type, payload }), 'utf8').digest('hex');
}
