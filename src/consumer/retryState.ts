import { createHmac, timingSafeEqual } from 'node:crypto';
import { applicationProperty } from '../servicebus/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';

/** Application properties a delayed-retry copy carries, so each round knows where it stands. */
export const retryProperties = {
  attempt: 'retry-attempt',
  firstFailureAt: 'retry-first-failure-at',
  lastError: 'retry-last-error',
  of: 'retry-of',
  /** HMAC-SHA256 over the others and the copy's own MessageId and dedup key: only the app can write it. */
  signature: 'retry-signature',
} as const;

/** Where a message stands in its delayed retries, as the app wrote it on the copy. */
export interface RetryState {
  /** Delayed retries so far; 0 for a first attempt. */
  readonly attempt: number;
  readonly firstFailureAtEpochMs?: number;
  /** The MessageId of the message the copies descend from: for operators and audits only, no id is derived from it. */
  readonly root?: string;
}

export type ReadRetryState = RetryState & {
  /** Set when the message carried retry properties that did not verify: it is treated as a first attempt. */
  readonly unverified?: string;
};

/**
 * The signature a copy carries. It covers the copy's MessageId and dedup key too, so a state cannot
 * be moved onto another message, and every field the next round trusts.
 */
export function signRetryState(secret: string, copy: { readonly messageId: string; readonly dedupKey: string }, state: Required<RetryState>): string {
  const covered = ['retry-state-v1', copy.messageId, copy.dedupKey, state.attempt, new Date(state.firstFailureAtEpochMs).toISOString(), state.root];
  return createHmac('sha256', secret).update(JSON.stringify(covered), 'utf8').digest('base64url');
}

/**
 * The keys a state may be signed with. Copies are signed with `current` only; `previous` is also
 * accepted, so that a rotation (previous = the old key, current = a new one) does not restart the
 * budget of copies already in their delayed retries.
 */
export interface RetryStateKeys {
  readonly current: string;
  readonly previous?: string;
}

/**
 * The retry state of a delivery, trusted only when its signature verifies: anyone who can send to
 * the queue can set `retry-*` properties, and a first failure a year ahead would otherwise buy a
 * budget that never runs out. Anything else, a copy scheduled by a release that did not sign
 * included, is a first attempt: its budget starts again from this failure, once.
 */
export function readRetryState(envelope: MessageEnvelope, dedupKey: string | undefined, keys: RetryStateKeys, nowMs: number): ReadRetryState {
  const attempt = applicationProperty(envelope, retryProperties.attempt);
  const firstFailureAt = applicationProperty(envelope, retryProperties.firstFailureAt);
  const root = applicationProperty(envelope, retryProperties.of);
  const signature = applicationProperty(envelope, retryProperties.signature);
  if (attempt === undefined && firstFailureAt === undefined && root === undefined && signature === undefined) return { attempt: 0 };
  const first = typeof firstFailureAt === 'string' ? Date.parse(firstFailureAt) : NaN;
  const claimed = { attempt: Number(attempt), firstFailureAtEpochMs: first, root: typeof root === 'string' ? root : '' };
  const verifies =
    typeof signature === 'string' &&
    envelope.messageId !== undefined &&
    dedupKey !== undefined &&
    Number.isSafeInteger(claimed.attempt) &&
    claimed.attempt > 0 &&
    !Number.isNaN(first) &&
    signedWithOneOf(keys, signature, { messageId: envelope.messageId, dedupKey }, claimed);
  if (!verifies) {
    const why = signature === undefined ? 'carries no retry-signature' : 'has a retry-signature that does not verify';
    return { attempt: 0, unverified: `the message has retry properties but ${why}: treated as a first attempt` };
  }
  // Our own clocks differ a little between instances: a first failure is never later than now.
  return { attempt: claimed.attempt, firstFailureAtEpochMs: Math.min(first, nowMs), root: claimed.root };
}

function signedWithOneOf(
  keys: RetryStateKeys,
  signature: string,
  copy: { readonly messageId: string; readonly dedupKey: string },
  state: Required<RetryState>,
): boolean {
  const candidates = keys.previous === undefined || keys.previous === keys.current ? [keys.current] : [keys.current, keys.previous];
  return candidates.some((key) => sameText(signature, signRetryState(key, copy, state)));
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
