import { createHash } from 'node:crypto';

/** Service Bus refuses a MessageId longer than this (the SDK throws before sending). */
export const maxMessageIdLength = 128;

const defaultDigestPrefix = '~sha256:';
const digestLength = 64;

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
 */
export function deriveMessageId(origin: string, suffix = '', digestPrefix = defaultDigestPrefix): string {
  const plain = `${origin}${suffix}`;
  if (plain.length <= maxMessageIdLength) return plain;
  const hashed = `${digestPrefix}${createHash('sha256').update(origin, 'utf8').digest('hex')}${suffix}`;
  if (hashed.length > maxMessageIdLength) {
    throw new RangeError(`deriveMessageId: the suffix ${JSON.stringify(suffix)} leaves no room for a digest within ${maxMessageIdLength} characters`);
  }
  return hashed;
}

/** At most this many characters of a suffix fit beside the digest. */
export const maxDerivedSuffixLength = maxMessageIdLength - defaultDigestPrefix.length - digestLength;
