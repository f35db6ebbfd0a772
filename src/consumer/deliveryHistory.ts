import { applicationProperty } from '../servicebus/index.js';
import type { ReceivedMessage } from './receivedMessage.js';
import { readRetryState, retryProperties } from './retryState.js';
import type { RetryStateKeys } from './retryState.js';

/**
 * What a delivery tells a flow about attempts before it. A flow whose effect an earlier attempt may
 * already have written reads first and writes only when nothing is there: a redelivered duplicate
 * costs one point read instead of a write that fails and a read. A first delivery writes first, as
 * before: reading there would add a round trip to every new message to save one on a rare copy.
 * A read that finds nothing decides nothing: the write is still the check, so a read that misses a
 * write (another instance's, just after; a replica behind under Session consistency) costs a 409.
 */
export interface DeliveryHistory {
  readonly previousAttemptMayHaveWritten: boolean;
}

export const firstDelivery: DeliveryHistory = { previousAttemptMayHaveWritten: false };

/** An in-invocation retry: the invocation's own earlier attempt may have written, its answer lost. */
export const afterAnEarlierRound: DeliveryHistory = { previousAttemptMayHaveWritten: true };

/**
 * Only what a sender cannot set counts: the broker's delivery count (Service Bus sets it), or the
 * retry state of a delayed-retry copy when its signature verifies (retryState.ts). A sender's own
 * `retry-*` properties change nothing: its message is a first delivery; so does a body's top-level
 * `deliveryCount`, which the host writes over the broker's (the consumer forgets it). Without a
 * signing key (no delayed retries in this wiring) no copy can verify, so only the count is read.
 */
export function deliveryHistoryOf(message: ReceivedMessage, retryState: { readonly keys?: RetryStateKeys; readonly nowMs: number }): DeliveryHistory {
  const { envelope } = message;
  if ((envelope.deliveryCount ?? 1) > 1) return { previousAttemptMayHaveWritten: true };
  // Most first deliveries carry no signature at all: they need no key.
  if (retryState.keys === undefined || applicationProperty(envelope, retryProperties.signature) === undefined) return firstDelivery;
  // The key the copy was signed over: as the delayed layer derived it, without the consumer's prefix.
  const state = readRetryState(envelope, message.retryKey(), retryState.keys, retryState.nowMs);
  return { previousAttemptMayHaveWritten: state.attempt > 0 };
}
