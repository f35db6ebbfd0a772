import { settingDefaults } from '../../src/config.js';
import { TransientSendError, newOutboxDocument } from '../../src/outbox/index.js';
import { create } from '../../src/idempotency/index.js';
import type { DocumentStore, VersionedDocument } from '../../src/idempotency/index.js';
import type { EventSender, OutboxDocument, OutboxMessage, PublishContext, SendOutcome } from '../../src/outbox/index.js';

export const outboxNowMs = Date.parse('2026-12-01T12:00:00Z');
export const outboxNow = () => new Date(outboxNowMs);

/** The broker, as the publisher sees it: what each destination answers. A stand-in for our own interface, not for an SDK. */
export class ScriptedSender implements EventSender {
  readonly sent: { destination: string; messageId: string }[] = [];
  constructor(private readonly answer: (destination: string, message: OutboxMessage) => SendOutcome | 'transient' = () => ({ kind: 'sent' })) {}
  async send(destination: string, messages: readonly OutboxMessage[]): Promise<readonly SendOutcome[]> {
    const answers = messages.map((m) => this.answer(destination, m));
    if (answers.includes('transient')) throw new TransientSendError(destination, new Error('ServiceBusy'));
    const outcomes = answers as SendOutcome[];
    for (const [i, m] of messages.entries()) if (outcomes[i]?.kind === 'sent') this.sent.push({ destination, messageId: m.messageId });
    return outcomes;
  }
  async close(): Promise<void> {}
}

/** A broker that refuses everything for good, as a disabled or deleted entity does. */
export const refusingSender = (reason = 'MessagingEntityDisabled') => new ScriptedSender(() => ({ kind: 'refused', reason, detail: `${reason}: refused` }));

export function outboxEntry(id: string, destination = 'order-events', createdAt = new Date(outboxNowMs - 5000).toISOString()): OutboxDocument {
  return newOutboxDocument({ id, orderId: `order-${id}`, eventType: 'OrderAccepted', destination, body: { id }, createdAt, causationMessageId: `m-${id}` });
}

/** The entries created in the store, each with the etag a publisher reading them now would hold. */
export async function storedEntries(store: DocumentStore, ...documents: OutboxDocument[]): Promise<VersionedDocument<OutboxDocument>[]> {
  for (const d of documents) await store.commit(d.orderId, [create(d)]);
  return Promise.all(documents.map(async (d) => (await store.read<OutboxDocument>(d.orderId, d.id))!));
}

export const publishContext = (
  store: DocumentStore,
  sender: EventSender,
  markConcurrency: number = settingDefaults.OUTBOX_MARK_CONCURRENCY,
): PublishContext => ({
  store,
  sender,
  now: outboxNow,
  publishedTtlSeconds: 3600,
  markConcurrency,
});
