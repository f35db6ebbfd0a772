/** Where a message's deduplication key came from, in order of preference. */
export type DedupKeySource = 'idempotency-key' | 'cloudevents' | 'message-id';

export interface DedupKey {
  /** The key as stored and logged: stable across redeliveries, resubmits and consumers. */
  readonly value: string;
  readonly source: DedupKeySource;
}

/** The identifiers a broker message offers; none of them is a lock token, sequence number or time. */
export interface DedupKeyCandidates {
  readonly idempotencyKey?: string;
  readonly cloudEvent?: { readonly source: string; readonly id: string };
  readonly messageId?: string;
}

/** Longest key accepted: well above any real id, low enough to reject a body pasted into a header. */
export const maxDedupKeyLength = 4096;

/**
 * Joins parts so that no two different lists give the same text: `|` separates, and `%` and `|`
 * inside a part are percent-escaped. Used for CloudEvents `source` + `id` and for the consumer prefix.
 */
export function joinKeyParts(parts: readonly string[]): string {
  return parts.map((part) => part.replace(/%/g, '%25').replace(/\|/g, '%7C')).join('|');
}

/**
 * Picks the key that survives redelivery. The CloudEvents key is the text an operator puts in
 * `idempotency-key` when a resubmit must change the MessageId, so both map to one record.
 * With a consumer name, the key is composite, so consumers sharing one store never collide.
 * Returns undefined when the message has no usable key: it must not be processed keyless.
 */
export function resolveDedupKey(candidates: DedupKeyCandidates, consumerName?: string): DedupKey | undefined {
  const chosen = chooseKey(candidates);
  if (chosen === undefined) return undefined;
  const value = consumerName ? `${joinKeyParts([consumerName])}|${chosen.value}` : chosen.value;
  return { value, source: chosen.source };
}

function chooseKey(c: DedupKeyCandidates): DedupKey | undefined {
  if (usable(c.idempotencyKey)) return { value: c.idempotencyKey, source: 'idempotency-key' };
  if (c.cloudEvent && usable(c.cloudEvent.source) && usable(c.cloudEvent.id)) {
    return { value: joinKeyParts([c.cloudEvent.source, c.cloudEvent.id]), source: 'cloudevents' };
  }
  if (usable(c.messageId)) return { value: c.messageId, source: 'message-id' };
  return undefined;
}

function usable(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '' && value.length <= maxDedupKeyLength;
}
