import { TransientStoreError } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';

/**
 * The one place that decides a message's fate from its outcome. With the standard trigger and
 * auto-complete, returning completes the message and throwing abandons it:
 * - created, parked, duplicate, stale: return (complete); a parked item is durable in the store;
 * - rescheduled: return as well: a copy is already accepted by Service Bus for later;
 * - retry: throw, so Service Bus redelivers after the failure;
 * - conflict, invalid: throw as well, until Service Bus dead-letters the message at its
 *   maxDeliveryCount; the reason is already recorded for the operator (see rejections.ts).
 */
export function throwUnlessCompletable(outcome: ProcessingOutcome): void {
  switch (outcome.kind) {
    case 'created':
    case 'parked':
    case 'duplicate':
    case 'stale':
    case 'rescheduled':
      return;
    case 'conflict':
    case 'invalid':
      throw outcome.error;
    case 'retry':
      throw outcome.cause instanceof Error ? outcome.cause : new TransientStoreError(outcome.reason);
    default: {
      // An outcome nobody decided on is never completed: completing it could lose the message.
      const unknown: never = outcome;
      throw new TypeError(`no settlement for outcome ${JSON.stringify((unknown as { kind?: unknown }).kind)}`);
    }
  }
}
