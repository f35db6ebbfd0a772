import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { dedupKeyOf } from '../orders/index.js';
import { bodyForTool } from './bodyView.js';
import { peekAll } from './deadLetterQueue.js';
import type { DlqContext } from './dlqCommands.js';
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

/**
 * Why the edit must wait, or undefined when no other message carries the original's key. An edit
 * replaces the key (`<key>~edit-<n>`), so any other message under the old key would apply the
 * original's effect beside the edited one: a copy a resubmit sent and then died before removing the
 * original, a producer's re-send waiting behind a backlog, a delayed retry's scheduled copy, or
 * another dead letter under the key that a later resubmit would send. The entity, its dead-letter
 * queue, the entity again and the dead-letter queue again: a message moves forward (entity to
 * dead-letter queue) but a resubmit, another operator's, moves one back, sending its copy before it
 * removes it. Looked at once each, a dead letter resubmitted between the two looks was in neither;
 * each later look sees what moved after the one before it, so a message passes unseen only if it
 * moves twice while the tool looks.
 */
export async function othersUnderKey(ctx: DlqContext, keys: readonly string[], target: string): Promise<string | undefined> {
  const named = keys.map((k) => JSON.stringify(k)).join(' or ');
  const active = ctx.active;
  if (!active) return `the tool cannot look in ${ctx.entityPath} for another message under key ${named}: nothing sent`;
  for (let round = 0; round < 2; round += 1) {
    const inEntity = await lookOrRefuse(ctx.entityPath, named, () => othersInEntity(ctx.entityPath, active, keys));
    if (inEntity !== undefined) return inEntity;
    const inDeadLetters = await lookOrRefuse(`the dead-letter queue of ${ctx.entityPath}`, named, () => othersInDeadLetters(ctx.receiver, keys, target));
    if (inDeadLetters !== undefined) return inDeadLetters;
  }
  return undefined;
}

/** A look that fails (a session entity a plain receiver cannot peek, a broker that refuses) is a refusal: the edit is sent only on a look that read to the end. */
async function lookOrRefuse(where: string, named: string, look: () => Promise<string | undefined>): Promise<string | undefined> {
  try {
    return await look();
  } catch (error) {
    return `the tool could not look in ${where} for another message under key ${named} (${error instanceof Error ? error.message : String(error)}): nothing sent`;
  }
}

async function othersInEntity(entityPath: string, active: ServiceBusReceiver, keys: readonly string[]): Promise<string | undefined> {
  const named = keys.map((k) => JSON.stringify(k)).join(' or ');
  const waiting = await messagesUnderKey(active, keys);
  if (waiting.kind === 'too-many')
    return `${entityPath} holds more than ${waiting.read} messages, so the tool cannot tell whether one under key ${named} waits there: nothing sent; edit it when the queue has drained`;
  if (waiting.found.length > 0)
    return `${entityPath} holds ${waiting.found.length === 1 ? 'a message' : `${waiting.found.length} messages`} under the same key (${describeFound(waiting.found)}), such as a copy a resubmit sent before it died: an edited copy under a new key would add a second effect beside it. Wait until it is processed (then the original is a duplicate) or dead-lettered (then edit one of them, after removing the others)`;
  return undefined;
}

async function othersInDeadLetters(receiver: ServiceBusReceiver, keys: readonly string[], target: string): Promise<string | undefined> {
  const named = keys.map((k) => JSON.stringify(k)).join(' or ');
  const dead = await messagesUnderKey(receiver, keys, { except: target });
  if (dead.kind === 'too-many')
    return `the dead-letter queue holds more than ${dead.read} messages, so the tool cannot tell whether another one is under key ${named}: nothing sent`;
  if (dead.found.length > 0)
    return `the dead-letter queue holds ${dead.found.length === 1 ? 'another message' : `${dead.found.length} other messages`} under the same key (${describeFound(dead.found)}): an edit replaces the key, and a later resubmit of ${dead.found.length === 1 ? 'it' : 'them'} would add the original's effect beside the edited one. Purge ${dead.found.length === 1 ? 'it' : 'them'} first (the purge exports what it removes), then edit`;
  return undefined;
}
