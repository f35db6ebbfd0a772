import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { dedupKeyOf } from '../orders/index.js';
import { bodyForTool } from './bodyView.js';
import { peekAll } from './deadLetterQueue.js';
import { envelopeOfReceived } from './receivedEnvelope.js';

/**
 * The most messages one look reads. An edit waits for a queue deeper than this to drain rather than
 * send on a guess; a lower bound would refuse edits in an ordinary backlog, a higher one keeps an
 * operator waiting minutes (250 a page).
 */
export const maxMessagesLookedAt = 100_000;

/** A message found under the key, as an operator finds it again. */
export interface SameKeyMessage {
  readonly sequenceNumber: number;
  readonly messageId?: string;
}

export type SameKeyLook =
  | { readonly kind: 'read'; readonly found: readonly SameKeyMessage[] }
  /** More messages than the bound: what lies past it is unknown. */
  | { readonly kind: 'too-many'; readonly read: number };

/** A message's dedup key as the tool computes it everywhere (without the consumer's prefix, on the bounded body). */
export const toolKeyOf = (m: ServiceBusReceivedMessage): string | undefined => dedupKeyOf(envelopeOfReceived(m), bodyForTool(m));

/**
 * Every message of an entity (or of its dead-letter queue) under `key` (or any of several), but the one numbered
 * `except`, peeked in sequence order to the end. Peek shows locked, deferred and (on a queue)
 * scheduled messages too, so a copy being processed or waiting for its time is found. Read to the
 * end, not stopped at the first page: a copy that replaces a message (a delayed retry, a resubmit)
 * is written before the one it replaces is removed, under a higher sequence number, so a look that
 * reaches the end meets one of the two.
 */
export async function messagesUnderKey(
  receiver: ServiceBusReceiver,
  key: string | readonly string[],
  options: { readonly except?: string; readonly limit?: number } = {},
): Promise<SameKeyLook> {
  const keys: readonly (string | undefined)[] = typeof key === 'string' ? [key] : key;
  const limit = options.limit ?? maxMessagesLookedAt;
  const found: SameKeyMessage[] = [];
  let read = 0;
  for await (const m of peekAll(receiver)) {
    read += 1;
    if (read > limit) return { kind: 'too-many', read: limit };
    if (String(m.sequenceNumber) === options.except || !keys.includes(toolKeyOf(m))) continue;
    found.push({ sequenceNumber: m.sequenceNumber?.toNumber() ?? 0, messageId: m.messageId === undefined ? undefined : String(m.messageId) });
  }
  return { kind: 'read', found };
}

/** How the found messages read in a refusal: the first few, and how many more. */
export function describeFound(found: readonly SameKeyMessage[]): string {
  const shown = found
    .slice(0, 5)
    .map((m) => `sequence number ${m.sequenceNumber}${m.messageId === undefined ? '' : ` (MessageId ${JSON.stringify(m.messageId.slice(0, 128))})`}`);
  return found.length > 5 ? `${shown.join(', ')} and ${found.length - 5} more` : shown.join(', ');
}
