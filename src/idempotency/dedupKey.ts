import { PermanentMessageError } from './errors.js';

/** Where a message's deduplication key came from, in order of preference. */
export type DedupKeySource = 'idempotency-key' | 'cloudevents' | 'message-id';

export interface DedupKey {
  /** The key as stored and logged: stable across redeliveries, resubmits and consumers. */
  readonly value: string;
  readonly source: DedupKeySource;
}

/** The identifiers a broker message offers; none of them is a lock token, sequence number or time. */
export interface DedupKeyCandidates {
  /** As the message declares it: anything but a usable string is refused, never replaced. */
  readonly idempotencyKey?: unknown;
  readonly cloudEvent?: { readonly source?: unknown; readonly id?: unknown };
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
 * A key the message declares (an idempotency key, CloudEvents attributes) is used or refused with
 * `PermanentMessageError`, never replaced by the MessageId: two copies whose declared key is
 * unusable would otherwise count as two messages. Returns undefined when the message has no key
 * at all: it must not be processed keyless.
 */
export function resolveDedupKey(candidates: DedupKeyCandidates, consumerName?: string): DedupKey | undefined {
  const chosen = chooseKey(candidates);
  if (chosen === undefined) return undefined;
  return { value: `${consumerKeyPrefix(consumerName)}${chosen.value}`, source: chosen.source };
}

/** What a consumer's name puts before every key it resolves (`<consumer>|`); nothing without a name. */
export function consumerKeyPrefix(consumerName?: string): string {
  return consumerName ? `${joinKeyParts([consumerName])}|` : '';
}

function chooseKey(c: DedupKeyCandidates): DedupKey | undefined {
  if (c.idempotencyKey !== undefined) {
    return { value: usableOrRefused(c.idempotencyKey, 'InvalidIdempotencyKey', 'the idempotency-key property'), source: 'idempotency-key' };
  }
  if (c.cloudEvent && (c.cloudEvent.source !== undefined || c.cloudEvent.id !== undefined)) {
    const source = usableOrRefused(c.cloudEvent.source, 'InvalidCloudEvent', 'the CloudEvent source');
    const id = usableOrRefused(c.cloudEvent.id, 'InvalidCloudEvent', 'the CloudEvent id');
    return { value: joinKeyParts([source, id]), source: 'cloudevents' };
  }
  if (c.messageId !== undefined && usable(c.messageId)) {
    const control = controlCharacterIn(c.messageId);
    if (control !== undefined)
      throw new PermanentMessageError('InvalidIdempotencyKey', `the MessageId, used as the dedup key, contains the control character ${control}`);
    return { value: c.messageId, source: 'message-id' };
  }
  return undefined;
}

/**
 * A key is stored, logged and printed by the operator tool: a control character (C0, DEL, C1) in
 * it could rewrite a terminal or a log line, and no real id carries one. Names the first found.
 */
function controlCharacterIn(value: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  const match = /[\u0000-\u001f\u007f-\u009f]/.exec(value);
  if (match === null) return undefined;
  return `U+${match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at position ${match.index}`;
}

function usableOrRefused(value: unknown, code: 'InvalidIdempotencyKey' | 'InvalidCloudEvent', what: string): string {
  if (value === undefined || value === null) throw new PermanentMessageError(code, `${what} is missing`);
  if (typeof value !== 'string') throw new PermanentMessageError(code, `${what} must be a string, not ${typeof value}`);
  if (value.trim() === '') throw new PermanentMessageError(code, `${what} is empty or white space`);
  if (value.length > maxDedupKeyLength) throw new PermanentMessageError(code, `${what} has ${value.length} characters; the limit is ${maxDedupKeyLength}`);
  const control = controlCharacterIn(value);
  if (control !== undefined) throw new PermanentMessageError(code, `${what} contains the control character ${control}`);
  return value;
}

function usable(value: string): boolean {
  return value.trim() !== '' && value.length <= maxDedupKeyLength;
}
