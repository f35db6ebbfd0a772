import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { Command } from 'commander';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import type { CommandContexts } from '../../../src/cli/commandContexts.js';
import { forEachLocked } from '../../../src/cli/deadLetterQueue.js';
import { addDeadLetterCommands } from '../../../src/cli/deadLetterCommandGroup.js';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { addOutboxCommands } from '../../../src/cli/outboxCommandGroup.js';
import { addParkedCommands } from '../../../src/cli/parkedCommandGroup.js';
import type { ParkedContext } from '../../../src/cli/parkedCommands.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import type { DocumentQuery } from '../../../src/idempotency/index.js';
import { fakeDeadLetterQueue } from '../../support/fakeDeadLetterQueue.js';
import { paymentReceived } from '../../support/orderMessages.js';
import { floodStart, floodedQueue } from '../../support/floodedQueue.js';

// The lists and the bulk selections over a flooded dead-letter queue or store: every run reads and
// holds a bounded number, and one stopped at a bound says where (warning, `truncated`, exit code 1).
const start = floodStart;
const now = Date.parse('2026-12-04T12:00:00Z');

/** A store that remembers every query it answered. */
function watchedStore() {
  const store = new InMemoryDocumentStore(() => now);
  const queries: DocumentQuery[] = [];
  const find = store.find.bind(store);
  store.find = (async (query: DocumentQuery) => {
    queries.push(query);
    return find(query);
  }) as typeof store.find;
  return { store, queries };
}

async function run(args: string[], c: { receiver?: ServiceBusReceiver; dlq?: Partial<DlqContext>; store?: InMemoryDocumentStore }) {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), env: {}, now: () => now };
  const contexts: CommandContexts = {
    deadLetters: async (use) =>
      use({
        receiver: c.receiver as ServiceBusReceiver,
        sender: () => {
          throw new Error('no sends');
        },
        entityPath: 'orders',
        duplicateDetectionWindowMs: 600_000,
        now: () => now,
        out: { line: () => undefined, progress: () => undefined },
        ...c.dlq,
      }),
    store: async (_needsQueue, use) =>
      use({
        store: c.store ?? new InMemoryDocumentStore(() => now),
        sender: () => ({ sendMessages: async () => undefined, close: async () => undefined }) as unknown as ReturnType<ParkedContext['sender']>,
        keepSeconds: 3600,
        now: () => now,
        out: { line: () => undefined, progress: () => undefined },
      }),
  };
  const program = new Command().exitOverride();
  const setExitCode = (n: number) => void (code = n);
  addDeadLetterCommands(program, io, setExitCode, contexts);
  addParkedCommands(program, io, setExitCode, contexts);
  addOutboxCommands(program, io, setExitCode, contexts);
  await program.parseAsync(args, { from: 'user' });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function parkedItems(store: InMemoryDocumentStore, count: number, state = 'rejected') {
  for (let n = count; n >= 1; n -= 1) {
    const parkedAt = new Date(start + n * 1000).toISOString();
    const document = {
      id: `p-${n}`,
      orderId: `o-${n}`,
      docType: 'parked',
      state,
      messageType: 'PaymentReceived',
      messageId: `pay-${n}`,
      dedupKey: `pay-${n}`,
      payload: paymentReceived(`o-${n}`, { paymentId: `pay-${n}`, amount: 1 }),
      parkedAt,
      ttl: 86_400,
      rejection: { reason: n % 2 ? 'OrderNeverArrived' : 'CurrencyMismatch', description: 'd', rejectedAt: parkedAt },
    };
    await store.commit(`o-${n}`, [{ kind: 'create', document }]);
  }
}

async function failedEntries(store: InMemoryDocumentStore, count: number) {
  for (let n = count; n >= 1; n -= 1) {
    const createdAt = new Date(start + n * 1000).toISOString();
    const document = {
      id: `e-${n}`,
      orderId: `o-${n}`,
      docType: 'outbox',
      eventType: 'OrderAccepted',
      destination: 'order-events',
      message: { messageId: `evt-${n}`, subject: 'OrderAccepted', body: {} },
      createdAt,
      state: 'failed',
      publishedAt: null,
      failure: { reason: 'MessagingEntityNotFound', detail: 'no topic', at: createdAt },
    };
    await store.commit(`o-${n}`, [{ kind: 'create', document }]);
  }
}

const everyQueryBounded = (queries: readonly DocumentQuery[], most: number) =>
  expect(queries.map((q) => q.limit !== undefined && q.limit <= most + 1 && q.orderBy !== undefined)).toEqual(queries.map(() => true));

describe('list over a flooded dead-letter queue', () => {
  it('reads at most --scan-max messages, says so with what it found, and exits 1', async () => {
    const queue = floodedQueue(1_000_000, (n) => ({ deadLetterReason: n % 2 ? 'A' : 'B' }));
    const listed = await run(['list', '--json', '--reason', 'A', '--scan-max', '1000'], { receiver: queue.receiver });
    expect(queue.peeked()).toBeLessThanOrEqual(1000);
    const { messages, truncated } = JSON.parse(listed.stdout) as { messages: { sequenceNumber: number }[]; truncated: string[] };
    expect(messages).toHaveLength(500);
    expect(truncated).toEqual(['orders/$deadletterqueue: stopped after 1000 messages']);
    expect(listed.stderr).toContain('warning: orders/$deadletterqueue: stopped after 1000 messages (in sequence order)');
    expect(listed.code).toBe(1);
  });

  it('shows at most --max rows (default 1000), the first in sequence order, and says so', async () => {
    const queue = floodedQueue(1_000_000, () => ({ deadLetterReason: 'A' }));
    const listed = await run(['list', '--json', '--max', '10'], { receiver: queue.receiver });
    const { messages, truncated } = JSON.parse(listed.stdout) as { messages: { sequenceNumber: number }[]; truncated: string[] };
    expect(messages.map((m) => m.sequenceNumber)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(truncated).toEqual(['orders/$deadletterqueue: stopped after 10 rows']);
    expect(listed.code).toBe(1);
    const byDefault = await run(['list'], { receiver: floodedQueue(1_000_000, () => ({}), 2000).receiver });
    expect(byDefault.stdout).toContain('1000 dead-lettered message(s)');
    expect(byDefault.stderr).toContain('stopped after 1000 rows (in sequence order)');
  });

  it('reads at most 100000 messages by default', async () => {
    const queue = floodedQueue(1_000_000, () => ({ deadLetterReason: 'A' }));
    const listed = await run(['list', '--json', '--reason', 'none-has-it'], { receiver: queue.receiver });
    expect(queue.peeked()).toBe(100_000);
    expect(JSON.parse(listed.stdout)).toEqual({ messages: [], truncated: ['orders/$deadletterqueue: stopped after 100000 messages'] });
  }, 30_000);

  it('exits 0 with nothing truncated when every message was read and shown', async () => {
    const listed = await run(['list', '--json', '--max', '300'], { receiver: floodedQueue(300, () => ({})).receiver });
    expect(JSON.parse(listed.stdout)).toMatchObject({ truncated: [] });
    expect((JSON.parse(listed.stdout) as { messages: unknown[] }).messages).toHaveLength(300);
    expect(listed.code).toBe(0);
  });
});

describe('parked list and outbox list over a flooded store', () => {
  it('parked list asks the store for at most --max items of each state, the oldest, and says so', async () => {
    const { store, queries } = watchedStore();
    await parkedItems(store, 30);
    const listed = await run(['parked', 'list', '--json', '--max', '10'], { store });
    const { items, truncated } = JSON.parse(listed.stdout) as { items: { id: string }[]; truncated: string[] };
    expect(items.map((i) => i.id)).toEqual(['p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6', 'p-7', 'p-8', 'p-9', 'p-10']);
    expect(truncated).toEqual(['parked items: stopped after 10 rows']);
    expect(listed.stderr).toContain('warning: parked items: stopped after 10 rows (oldest first)');
    expect(listed.code).toBe(1);
    everyQueryBounded(queries, 10);
  });

  it('parked list reads at most --scan-max items of each state when a filter is applied after the read', async () => {
    const { store, queries } = watchedStore();
    await parkedItems(store, 30);
    const listed = await run(['parked', 'list', '--json', '--reason', 'CurrencyMismatch', '--scan-max', '10'], { store });
    const { items, truncated } = JSON.parse(listed.stdout) as { items: { id: string }[]; truncated: string[] };
    expect(items.map((i) => i.id)).toEqual(['p-2', 'p-4', 'p-6', 'p-8', 'p-10']);
    expect(truncated).toEqual(['parked items (rejected): stopped after 10']);
    expect(listed.code).toBe(1);
    everyQueryBounded(queries, 10);
  });

  it('outbox list asks the store for at most --max entries, the oldest, and says so', async () => {
    const { store, queries } = watchedStore();
    await failedEntries(store, 30);
    const listed = await run(['outbox', 'list', '--json', '--max', '5'], { store });
    const { entries, truncated } = JSON.parse(listed.stdout) as { entries: { id: string }[]; truncated: string[] };
    expect(entries.map((e) => e.id)).toEqual(['e-1', 'e-2', 'e-3', 'e-4', 'e-5']);
    expect(truncated).toEqual(['outbox entries: stopped after 5 rows']);
    expect(listed.code).toBe(1);
    everyQueryBounded(queries, 5);
    const whole = await run(['outbox', 'list', '--json'], { store });
    expect(JSON.parse(whole.stdout)).toMatchObject({ truncated: [] });
    expect(whole.code).toBe(0);
  });
});

describe('bulk selections over a flooded dead-letter queue', () => {
  const flood = (count: number, wanted: number) =>
    fakeDeadLetterQueue(
      Array.from({ length: count }, (_, i) => ({
        sequenceNumber: Long.fromNumber(i + 1),
        messageId: `m-${i + 1}`,
        subject: 'PaymentReceived',
        contentType: 'application/json',
        body: paymentReceived(`o-${i + 1}`, { paymentId: `p-${i + 1}`, amount: 1 }),
        enqueuedTimeUtc: new Date(now - 60_000),
        deadLetterReason: i + 1 === wanted ? 'Wanted' : 'Flood',
        applicationProperties: {},
      })),
    );
  /** Counts the locks the run holds at once. */
  const lockCounting = (receiver: ServiceBusReceiver) => {
    let held = 0;
    let most = 0;
    const counted = {
      ...receiver,
      peekMessages: receiver.peekMessages.bind(receiver),
      receiveMessages: async (max: number, options?: object) => {
        const got = await receiver.receiveMessages(max, options);
        held += got.length;
        most = Math.max(most, held);
        return got;
      },
      completeMessage: async (m: ServiceBusReceivedMessage) => {
        await receiver.completeMessage(m);
        held -= 1;
      },
      abandonMessage: async (m: ServiceBusReceivedMessage) => {
        await receiver.abandonMessage(m);
        held -= 1;
      },
      renewMessageLock: receiver.renewMessageLock.bind(receiver),
    } as unknown as ServiceBusReceiver;
    return { receiver: counted, most: () => most, held: () => held };
  };

  it('forEachLocked holds at most scanMax declined messages locked (and one more, to know there are more), and says it stopped', async () => {
    const queue = flood(3000, 2500);
    const locks = lockCounting(queue.receiver);
    const seen: number[] = [];
    const run = await forEachLocked(locks.receiver, async (m) => (seen.push(m.sequenceNumber?.toNumber() ?? 0), 'declined'), undefined, { scanMax: 1000 });
    expect({ most: locks.most(), held: locks.held(), seen: seen.length, last: seen.at(-1) }).toEqual({ most: 1001, held: 0, seen: 1000, last: 1000 });
    expect(run).toEqual({ stoppedAfter: 1000 });
  });

  it('resubmit with a filter locks at most --scan-max messages (and one), releases them, and names what it did not reach', async () => {
    const queue = flood(3000, 2500);
    const locks = lockCounting(queue.receiver);
    const done = await run(['resubmit', '--reason', 'Wanted', '--yes', '--scan-max', '1000', '--json'], {
      receiver: locks.receiver,
      dlq: { sender: () => queue.sender },
    });
    expect(locks.most()).toBeLessThanOrEqual(1001);
    expect(locks.held()).toBe(0);
    const report = JSON.parse(done.stdout) as { reports: unknown[]; truncated: string[] };
    expect(report.reports).toEqual([]);
    expect(report.truncated).toEqual(['orders/$deadletterqueue: stopped after 1000 messages']);
    expect(done.stderr).toContain('warning: orders/$deadletterqueue: stopped after 1000 messages (in sequence order)');
    expect(done.code).toBe(1);
    expect(queue.sent).toEqual([]);
    expect(queue.remaining()).toHaveLength(3000);
  });

  it('resubmit --all stopped at --scan-max has copied and then removed exactly the messages it reached, and left the rest as they were', async () => {
    const queue = flood(3000, 0);
    const done = await run(['resubmit', '--all', '--yes', '--max', '10000', '--scan-max', '1000', '--json'], {
      receiver: queue.receiver,
      dlq: { sender: () => queue.sender },
    });
    const report = JSON.parse(done.stdout) as { reports: { sequenceNumber: number; outcome: string }[]; truncated: string[] };
    expect(
      report.reports
        .filter((r) => r.outcome === 'resubmitted')
        .map((r) => r.sequenceNumber)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(queue.sent).toHaveLength(1000);
    expect(new Set(queue.sent.map((m) => m.applicationProperties?.['idempotency-key'] ?? m.messageId))).toEqual(
      new Set(Array.from({ length: 1000 }, (_, i) => `m-${i + 1}`)),
    );
    expect(queue.remaining().map((m) => m.sequenceNumber?.toNumber())).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1001));
    expect(report.truncated).toEqual(['orders/$deadletterqueue: stopped after 1000 messages']);
    expect(done.code).toBe(1);
  });

  it('resubmit within the bound still sends each copy before it removes the original, and exits 0', async () => {
    const queue = flood(600, 500);
    const done = await run(['resubmit', '--reason', 'Wanted', '--yes', '--scan-max', '1000', '--json'], {
      receiver: queue.receiver,
      dlq: { sender: () => queue.sender },
    });
    expect(JSON.parse(done.stdout)).toMatchObject({ reports: [{ sequenceNumber: 500, outcome: 'resubmitted' }], truncated: [] });
    expect(queue.sent.map((m) => m.applicationProperties?.['idempotency-key'] ?? m.messageId)).toEqual(['m-500']);
    expect(queue.remaining()).toHaveLength(599);
    expect(done.code).toBe(0);
  });

  it('a bulk plan (no --yes) and purge peek or lock at most --scan-max messages too', async () => {
    const planned = floodedQueue(1_000_000, () => ({ deadLetterReason: 'Flood' }), 1000);
    const plan = await run(['resubmit', '--reason', 'Wanted', '--scan-max', '1000', '--json'], { receiver: planned.receiver });
    expect(JSON.parse(plan.stdout)).toMatchObject({ dryRun: true, reports: [], truncated: ['orders/$deadletterqueue: stopped after 1000 messages'] });
    expect(plan.code).toBe(1);
    const queue = flood(3000, 2500);
    const locks = lockCounting(queue.receiver);
    const purged = await run(['purge', '--reason', 'Wanted', '--yes', '--no-export', '--scan-max', '1000', '--json'], { receiver: locks.receiver });
    expect(locks.most()).toBeLessThanOrEqual(1001);
    expect(JSON.parse(purged.stdout)).toMatchObject({ reports: [], truncated: ['orders/$deadletterqueue: stopped after 1000 messages'] });
    expect(queue.remaining()).toHaveLength(3000);
  });
});

describe('bulk selections over a flooded store', () => {
  it('parked resubmit --all reads at most --scan-max items of each state, the oldest, and says so', async () => {
    const { store, queries } = watchedStore();
    await parkedItems(store, 30);
    const plan = await run(['parked', 'resubmit', '--all', '--scan-max', '10', '--max', '100', '--json'], { store });
    const report = JSON.parse(plan.stdout) as { reports: { id: string }[]; truncated: string[] };
    expect(report.reports.map((r) => r.id)).toEqual(['p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6', 'p-7', 'p-8', 'p-9', 'p-10']);
    expect(report.truncated).toEqual(['parked items (rejected): stopped after 10']);
    expect(plan.code).toBe(1);
    everyQueryBounded(queries, 10);
  });

  it('outbox requeue --all reads at most --scan-max failed entries, the oldest, and says so', async () => {
    const { store, queries } = watchedStore();
    await failedEntries(store, 30);
    const plan = await run(['outbox', 'requeue', '--all', '--scan-max', '10', '--json'], { store });
    const report = JSON.parse(plan.stdout) as { reports: { id: string }[]; truncated: string[] };
    expect(report.reports).toHaveLength(10);
    expect(report.truncated).toEqual(['outbox entries (failed): stopped after 10']);
    expect(plan.code).toBe(1);
    everyQueryBounded(queries, 10);
  });
});
