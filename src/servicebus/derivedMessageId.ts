import { createHash, createHmac } from 'node:crypto';

/** Service Bus refuses a MessageId longer than this (the SDK throws before sending). */
export const maxMessageIdLength = 128;

const defaultDigestPrefix = '~sha256:';
const keyedDigestPrefix = '~hmac:';
const digestLength = 64;

export interface DerivationOptions {
  /** Replaces `~sha256:` before the digest of an over-long origin. */
  readonly digestPrefix?: string;
  /**
   * With a secret, the origin is always replaced by HMAC-SHA256(secret, origin + suffix): a sender
   * who knows the origin (an order id is a MessageId) cannot compute the id and send a message
   * under it first, which the broker's duplicate detection would keep while it drops ours.
   */
  readonly secret?: string;
}

/**
 * Every MessageId the app derives from another one (a delayed-retry copy, an operator's resubmitted
 * copy, an outbox event named after its document) is made here, so that none can exceed the 128
 * characters Service Bus allows: an over-long id is refused by the SDK before it is sent, and a
 * message whose retry copy cannot be sent falls back to redelivery until it is dead-lettered with
 * no record of why.
 *
 * `origin + suffix` when it fits; otherwise the origin is replaced by the SHA-256 of it, so the id
 * stays deterministic (two attempts at the same copy share it and the broker's duplicate detection
 * drops the second) and distinct per origin. The suffix is ours (`~retry-3`), never a sender's.
 * With `secret`, always `~hmac:<HMAC of origin and suffix><suffix>`: as deterministic, not predictable.
 */
export function deriveMessageId(origin: string, suffix = '', options: DerivationOptions = {}): string {
  if (options.secret !== undefined) {
    const keyed = createHmac('sha256', options.secret)
      .update(JSON.stringify(['message-id-v1', origin, suffix]), 'utf8')
      .digest('hex');
    return fitted(`${keyedDigestPrefix}${keyed}${suffix}`, suffix);
  }
  const plain = `${origin}${suffix}`;
  if (plain.length <= maxMessageIdLength) return plain;
  return fitted(`${options.digestPrefix ?? defaultDigestPrefix}${createHash('sha256').update(origin, 'utf8').digest('hex')}${suffix}`, suffix);
}

function fitted(id: string, suffix: string): string {
  if (id.length > maxMessageIdLength) {
    throw new RangeError(`deriveMessageId: the suffix ${JSON.stringify(suffix)} leaves no room for a digest within ${maxMessageIdLength} characters`);
  }
  return id;
}

/** At most this many characters of a suffix fit beside the digest. */
export const maxDerivedSuffixLength = maxMessageIdLength - defaultDigestPrefix.length - digestLength;
