import type { OutboxMessage } from './outboxDocument.js';

/**
 * What the publisher needs from a broker. `send` answers per message: `sent` once the broker has
 * accepted it, `refused` when it never will (too large, no such entity, not allowed): the event is
 * set aside, and the others go on. A fault that may pass (a timeout, a throttled namespace) is
 * thrown as `TransientSendError`, and nothing is marked.
 */
export interface EventSender {
  send(destination: string, messages: readonly OutboxMessage[]): Promise<readonly SendOutcome[]>;
  close(): Promise<void>;
}

export type SendOutcome = { readonly kind: 'sent' } | { readonly kind: 'refused'; readonly reason: string; readonly detail: string };

export class TransientSendError extends Error {
  constructor(
    readonly destination: string,
    readonly cause: unknown,
  ) {
    super(`sending to ${destination} failed for now: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'TransientSendError';
  }
}
