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
}

/**
 * Locks dead-lettered messages a small batch at a time and hands each to `act` while its lock is
 * fresh, several at once. A message whose lock ran out before `act` changed anything comes back in
 * a later batch (re-lock); messages `act` declines stay locked to the end of the run, so they are
 * not handed out again, then are released. Stops when nothing new arrives, or when `done` says so.
 */
export async function forEachLocked(
  receiver: ServiceBusReceiver,
  act: (m: ServiceBusReceivedMessage) => Promise<LockedOutcome>,
  done: () => boolean = () => false,
  options: LockedRunOptions = {},
): Promise<void> {
  const finished = new Set<string>();
  const relocks = new Map<string, number>();
  const declined: ServiceBusReceivedMessage[] = [];
  try {
    while (!done()) {
      const batch = await receiver.receiveMessages(options.batchSize ?? 32, { maxWaitTimeInMs: 1500 });
      const fresh = batch.filter((m) => !finished.has(String(m.sequenceNumber)));
      declined.push(...batch.filter((m) => finished.has(String(m.sequenceNumber))));
      if (fresh.length === 0) return;
      await inParallel(fresh, options.concurrency ?? 8, async (m) => {
        const seq = String(m.sequenceNumber);
        if (done()) return void declined.push(m);
        const outcome = await act(m);
        if (outcome === 'declined') declined.push(m);
        const attempts = (relocks.get(seq) ?? 0) + 1;
        relocks.set(seq, attempts);
        if (outcome !== 'lock-lost' || attempts >= 3) finished.add(seq);
      });
    }
  } finally {
    await Promise.all(declined.map((m) => receiver.abandonMessage(m).catch(() => undefined)));
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
