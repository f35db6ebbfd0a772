import type { ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusReceiver, ServiceBusSender } from '@azure/service-bus';
import Long from 'long';

/** What a test gives of a dead-lettered message; the sequence number is required, the rest as the SDK would show it. */
export type DeadLetterSeed = Partial<ServiceBusReceivedMessage> & { readonly sequenceNumber: Long };

/**
 * A dead-letter queue and the sender back to its entity, in memory, for the operator tool's runs:
 * peek, lock (receive), complete and abandon as the SDK's receiver does them, locks that run out
 * only when the test says so (`expireLocks`), and every sent copy kept in order in `sent` (or, with
 * duplicate detection, in `dropped` when the broker would drop it).
 */
export interface DuplicateDetection {
  readonly windowMs: number;
  readonly now: () => number;
  /** MessageIds the entity took before the run, and when: the broker's duplicate-detection history. */
  readonly history: readonly (readonly [messageId: string, atMs: number])[];
}

export function fakeDeadLetterQueue(seeds: readonly DeadLetterSeed[], duplicates?: DuplicateDetection) {
  const entries = new Map<string, { message: ServiceBusReceivedMessage; locked: boolean }>();
  for (const seed of seeds) entries.set(seed.sequenceNumber.toString(), { message: seed as ServiceBusReceivedMessage, locked: false });
  const sent: ServiceBusMessage[] = [];
  /** Copies the broker accepted and then silently dropped, as a duplicate of a MessageId in its history. */
  const dropped: ServiceBusMessage[] = [];
  const history = new Map<string, number>();
  for (const [id, at] of duplicates?.history ?? []) history.set(id, Math.max(at, history.get(id) ?? at));
  /** Sent copies still in the entity (not yet processed), by the sequence number the broker gave them. */
  const waiting: ServiceBusReceivedMessage[] = [];
  const take = (m: ServiceBusMessage) => {
    const id = String(m.messageId);
    const seen = history.get(id);
    if (duplicates && seen !== undefined && duplicates.now() - seen < duplicates.windowMs) return void dropped.push(m);
    if (duplicates) history.set(id, duplicates.now());
    sent.push(m);
    waiting.push({
      ...m,
      sequenceNumber: Long.fromNumber(100_000 + sent.length),
      applicationProperties: m.applicationProperties ?? {},
    } as ServiceBusReceivedMessage);
  };
  const ordered = () => [...entries.values()].sort((a, b) => a.message.sequenceNumber?.compare(b.message.sequenceNumber ?? Long.ZERO) ?? 0);
  const lockLost = () => Object.assign(new Error('the lock was lost'), { code: 'MessageLockLost' });
  const receiver = {
    peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) =>
      ordered()
        .filter((e) => (e.message.sequenceNumber ?? Long.ZERO).greaterThanOrEqual(options?.fromSequenceNumber ?? Long.ZERO))
        .slice(0, max)
        .map((e) => e.message),
    receiveMessages: async (max: number) => {
      const free = ordered()
        .filter((e) => !e.locked)
        .slice(0, max);
      for (const e of free) e.locked = true;
      return free.map((e) => e.message);
    },
    completeMessage: async (m: ServiceBusReceivedMessage) => {
      const seq = String(m.sequenceNumber);
      if (!entries.get(seq)?.locked) throw lockLost();
      entries.delete(seq);
    },
    abandonMessage: async (m: ServiceBusReceivedMessage) => {
      const entry = entries.get(String(m.sequenceNumber));
      if (entry) entry.locked = false;
    },
    renewMessageLock: async () => new Date(),
    close: async () => undefined,
  } as unknown as ServiceBusReceiver;
  const sender = {
    sendMessages: async (m: ServiceBusMessage | ServiceBusMessage[]) => void (Array.isArray(m) ? m : [m]).forEach(take),
    close: async () => undefined,
  } as unknown as ServiceBusSender;
  /** The entity's own messages, peeked only (as the tool's `active` receiver); `beforePeek` lets a test run a consumer first. */
  const hooks: { beforePeek?: () => Promise<void> } = {};
  const active = {
    peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) => {
      await hooks.beforePeek?.();
      return waiting.filter((m) => (m.sequenceNumber ?? Long.ZERO).greaterThanOrEqual(options?.fromSequenceNumber ?? Long.ZERO)).slice(0, max);
    },
    close: async () => undefined,
  } as unknown as ServiceBusReceiver;
  return {
    receiver,
    active,
    hooks,
    /** The copies still in the entity; `processed` takes one out, as a consumer that completed it. */
    waiting: () => [...waiting],
    processed: (m: ServiceBusReceivedMessage) => void waiting.splice(waiting.indexOf(m), 1),
    /** The consumer dead-letters a waiting copy: it leaves the entity and joins the dead-letter queue under its own sequence number. */
    deadLettered: (m: ServiceBusReceivedMessage) => {
      waiting.splice(waiting.indexOf(m), 1);
      entries.set(String(m.sequenceNumber), { message: m, locked: false });
    },
    sender,
    sent,
    dropped,
    /** The locks of an earlier run run out: its messages can be locked again. */
    expireLocks: () => entries.forEach((e) => (e.locked = false)),
    remaining: () => ordered().map((e) => e.message),
  };
}
