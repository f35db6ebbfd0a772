import type { StoredDocument } from './documentStore.js';
import type { PermanentMessageError } from './errors.js';

/** What processing one delivery of a message came to. Outcomes are values; only the boundary throws. */
export type ProcessingOutcome =
  /**
   * The message's effect was written (an order created, a payment or a status applied), with the
   * early arrivals it applied along with it and those it had to reject.
   */
  | { readonly kind: 'created'; readonly appliedParked?: number; readonly rejectedParked?: readonly ParkedItemRejected[] }
  /** Its prerequisite is not stored yet: recorded durably to be applied when it is; complete this one. */
  | { readonly kind: 'parked'; readonly itemId: string }
  /** The effect was already there with the same fingerprint: complete with no further effect. */
  | { readonly kind: 'duplicate' }
  /** Absolute state older than or as old as what is stored: nothing to apply. */
  | { readonly kind: 'stale'; readonly storedVersion: number }
  /**
   * Same key, different payload: recorded, alerted, and bound for the dead-letter queue. `evidence`
   * is the record of the conflict, written by the caller in one batch with the rejection record.
   */
  | { readonly kind: 'conflict'; readonly error: PermanentMessageError; readonly evidence?: StoredDocument }
  /** The message can never be processed: bound for the dead-letter queue with this reason. */
  | { readonly kind: 'invalid'; readonly error: PermanentMessageError }
  /** Not now (store unavailable, a prerequisite not yet stored): redeliver. */
  | { readonly kind: 'retry'; readonly reason: string; readonly cause?: unknown }
  /** Still failing after the in-invocation retries: a copy is scheduled for later; complete this one. */
  | { readonly kind: 'rescheduled'; readonly attempt: number; readonly copyMessageId: string; readonly enqueueAt: string; readonly reason: string };

/** An early arrival that could not be applied when its prerequisite came, and why. */
export interface ParkedItemRejected {
  readonly id: string;
  readonly orderId: string;
  readonly messageType: string;
  readonly dedupKey: string;
  readonly messageId?: string;
  readonly reason: string;
  readonly description: string;
}

export type OutcomeKind = ProcessingOutcome['kind'];
