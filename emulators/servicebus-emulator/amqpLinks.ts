import type { Receiver, Sender } from 'rhea';
import type { Settlement } from './messageEntity.js';

// The rhea link internals and AMQP details the broker relies on, kept apart from its logic.

/** rhea fields the broker sets that its typings do not declare. */
export interface LinkInternals {
  local: { attach: { max_message_size?: number; snd_settle_mode?: number; rcv_settle_mode?: number; properties?: Record<string, unknown> } };
  remote: {
    attach: {
      snd_settle_mode?: number;
      rcv_settle_mode?: number;
      source?: { address?: string; filter?: Record<string, unknown> };
      target?: { address?: string };
    };
  };
  _draining?: boolean;
  _drained?: boolean;
  delivery_count: number;
  credit: number;
  _get_drain?: () => boolean;
}

interface OutgoingDeliveries {
  next_pending_delivery: number;
  next_delivery_id: number;
  deliveries: { by_id(id: number): { link: unknown } | undefined };
}

/**
 * rhea takes a link's credit only when the session writes the transfer, after this turn: `sendable()`
 * stays true while deliveries pile up behind one receiver. Count the ones it has not written yet, so
 * that competing receivers each get what their own credit asks for.
 */
export function hasUnusedCredit(sender: Sender): boolean {
  if (!sender.sendable()) return false;
  const outgoing = (sender.session as unknown as { outgoing: OutgoingDeliveries }).outgoing;
  let unsent = 0;
  for (let id = outgoing.next_pending_delivery; id < outgoing.next_delivery_id; id += 1) {
    if (outgoing.deliveries.by_id(id)?.link === sender) unsent += 1;
  }
  return (sender as unknown as LinkInternals).credit > unsent;
}

export interface DispositionState {
  error?: { info?: Record<string, unknown> };
  undeliverable_here?: boolean;
  message_annotations?: Record<string, unknown>;
}

export const lockLostDescription = 'The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.';

/** What Service Bus answers a dead-letter of a message in a dead-letter queue; the JS SDK reports it as GeneralError. */
export const deadLetterInDeadLetterQueue = {
  condition: 'amqp:not-allowed',
  description: 'A message in a dead-letter queue cannot be dead-lettered: complete it, or abandon it to leave it there.',
} as const;

export function settlementFor(outcome: 'accepted' | 'rejected' | 'modified' | 'released', state: DispositionState | undefined): Settlement {
  if (outcome === 'accepted') return { kind: 'complete' };
  if (outcome === 'rejected') {
    const { DeadLetterReason, DeadLetterErrorDescription, ...properties } = state?.error?.info ?? {};
    return {
      kind: 'dead-letter',
      info: {
        reason: DeadLetterReason === undefined ? undefined : String(DeadLetterReason),
        description: DeadLetterErrorDescription === undefined ? undefined : String(DeadLetterErrorDescription),
        properties,
      },
    };
  }
  // rhea raises `released` for some `modified` states, so the state decides: undeliverable here = defer.
  if (state?.undeliverable_here) return { kind: 'defer', properties: state.message_annotations };
  return { kind: 'abandon', properties: state?.message_annotations };
}

/**
 * The entity path of a link address, lower-cased: the JS SDK sends `orders`, the .NET client
 * `/orders`, and either may send a full `amqps://namespace/orders` URI.
 */
export function entityPath(address: string): string {
  return address
    .replace(/^[a-z]+:\/\/[^/]+/i, '')
    .replace(/^\/+/, '')
    .toLowerCase();
}

export function notFound(link: Sender | Receiver, address: string): void {
  link.close({ condition: 'amqp:not-found', description: `The messaging entity '${address}' could not be found.` });
}
