import type { ServiceBusClient, ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';

export interface EntityAddress {
  readonly queue?: string;
  readonly topic?: string;
  readonly subscription?: string;
}

export function entityPath(address: EntityAddress): string {
  return address.queue ?? `${address.topic ?? ''}/subscriptions/${address.subscription ?? ''}`;
}

/** A receiver on the entity's dead-letter sub-queue; locks are not renewed in the background. */
export function deadLetterReceiver(client: ServiceBusClient, address: EntityAddress): ServiceBusReceiver {
  const options = { subQueueType: 'deadLetter' as const, maxAutoLockRenewalDurationInMs: 0 };
  return address.queue ? client.createReceiver(address.queue, options) : client.createReceiver(address.topic ?? '', address.subscription ?? '', options);
}

/** A receiver on the entity's own messages, for peeking only (it is never asked to receive, so it locks nothing). */
export function activeReceiver(client: ServiceBusClient, address: EntityAddress): ServiceBusReceiver {
  return address.queue ? client.createReceiver(address.queue) : client.createReceiver(address.topic ?? '', address.subscription ?? '');
}

/** Every message of the receiver's entity (or dead-letter queue), without locking any, in sequence order. */
export async function* peekAll(receiver: ServiceBusReceiver, pageSize = 250): AsyncGenerator<ServiceBusReceivedMessage> {
  let from = Long.fromNumber(0);
  for (;;) {
    const page = await receiver.peekMessages(pageSize, { fromSequenceNumber: from });
    if (page.length === 0) return;
    for (const m of page) yield m;
    const last = page[page.length - 1]?.sequenceNumber;
    if (!last) return;
    from = last.add(1);
  }
}

/** What `act` made of a locked message. */
export type LockedOutcome = 'handled' | 'declined' | 'lock-lost';

export interface LockedRunOptions {
  /** Locked at once: small enough that the last of a batch is handled well within the lock. */
  readonly batchSize?: number;
  readonly concurrency?: number;
  /**
   * At most this many distinct messages are locked in one run (handed to `act` or declined): a
   * filter that matches a few messages of a flooded queue neither walks it all nor holds it all.
   */
  readonly scanMax?: number;
}

/**
 * Locks dead-lettered messages a small batch at a time and hands each to `act` while its lock is
 * fresh, several at once. A message whose lock ran out before `act` changed anything comes back in
 * a later batch (re-lock); messages `act` declines stay locked to the end of the run, so they are
 * not handed out again, then are released. Stops when nothing new arrives, when `done` says so, or
 * once `scanMax` distinct messages were locked and another one arrives (`stoppedAfter`: the messages
 * past it were not looked at). What it holds is bounded by `scanMax` and one more: a message whose
 * lock ran out and came back again is held once.
 */
export async function forEachLocked(
  receiver: ServiceBusReceiver,
  act: (m: ServiceBusReceivedMessage) => Promise<LockedOutcome>,
  done: () => boolean = () => false,
  options: LockedRunOptions = {},
): Promise<{ readonly stoppedAfter?: number }> {
  const scanMax = options.scanMax ?? Number.POSITIVE_INFINITY;
  const finished = new Set<string>();
  const relocks = new Map<string, number>();
  const declined = new Map<string, ServiceBusReceivedMessage>();
  // A lock that ran out leaves an earlier copy of the message here: release every one of them.
  const lapsed: ServiceBusReceivedMessage[] = [];
  const decline = (m: ServiceBusReceivedMessage) => {
    const seq = String(m.sequenceNumber);
    const earlier = declined.get(seq);
    if (earlier) lapsed.push(earlier);
    declined.set(seq, m);
  };
  const release = async (messages: readonly ServiceBusReceivedMessage[]) => {
    await Promise.all(messages.map((m) => receiver.abandonMessage(m).catch(() => undefined)));
  };
  try {
    while (!done()) {
      await release(lapsed.splice(0));
      // Past the bound, one more is locked: it tells a run that stopped short from one that read all.
      const batch = await receiver.receiveMessages(Math.max(1, Math.min(options.batchSize ?? 32, scanMax - relocks.size)), { maxWaitTimeInMs: 1500 });
      const again = batch.filter((m) => finished.has(String(m.sequenceNumber)) || relocks.has(String(m.sequenceNumber)));
      const fresh = batch.filter((m) => !again.includes(m));
      again.filter((m) => finished.has(String(m.sequenceNumber))).forEach(decline);
      const room = Math.max(0, scanMax - relocks.size);
      const beyond = fresh.slice(room);
      const taken = [...again.filter((m) => !finished.has(String(m.sequenceNumber))), ...fresh.slice(0, room)];
      if (beyond.length > 0) {
        await release(beyond);
        await handOut(taken);
        return { stoppedAfter: scanMax };
      }
      // Nothing new: the queue is read to its end, unless the bound was reached on its last message.
      if (taken.length === 0) return relocks.size >= scanMax ? { stoppedAfter: scanMax } : {};
      await handOut(taken);
    }
    return {};
  } finally {
    await release([...lapsed, ...declined.values()]);
  }

  async function handOut(messages: readonly ServiceBusReceivedMessage[]): Promise<void> {
    await inParallel(messages, options.concurrency ?? 8, async (m) => {
      const seq = String(m.sequenceNumber);
      if (done()) return void decline(m);
      const outcome = await act(m);
      if (outcome === 'declined') decline(m);
      const attempts = (relocks.get(seq) ?? 0) + 1;
      relocks.set(seq, attempts);
      if (outcome !== 'lock-lost' || attempts >= 3) finished.add(seq);
    });
  }
}

async function inParallel<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Renews the lock when less than `marginMs` is left: a slow send must not lose the original. */
export async function keepLocked(receiver: ServiceBusReceiver, m: ServiceBusReceivedMessage, marginMs = 15_000): Promise<void> {
  if (m.lockedUntilUtc && m.lockedUntilUtc.getTime() - Date.now() < marginMs) await receiver.renewMessageLock(m);
}

export function isLockLost(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'MessageLockLost';
}
