import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { Command } from 'commander';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import type { FailureGroup } from '../../../src/cli/failureGroups.js';
import { deadLetterItem } from '../../../src/cli/failureItems.js';
import { addGroupsCommands } from '../../../src/cli/groupsCommands.js';
import type { GroupsConnections } from '../../../src/cli/groupsCommands.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { floodStart, floodedQueue } from '../../support/floodedQueue.js';

// A dead-letter queue flooded by a hostile sender: `groups` answers with bounded memory and a bounded scan.
const start = floodStart;
const now = Date.parse('2026-12-04T12:00:00Z');

async function runGroups(receiver: ServiceBusReceiver, args: string[], store: InMemoryDocumentStore = new InMemoryDocumentStore()) {
  const out: string[] = [];
  const err: string[] = [];
  let code = -1;
  const program = new Command().exitOverride();
  const connections = (): GroupsConnections => ({
    deadLetterEntities: () => [{ queue: 'orders' }],
    deadLetters: async (_address, run) => run({ receiver, entityPath: 'orders' } as DlqContext),
    store: async (_needsQueue, run) =>
      run({
        store,
        sender: () => {
          throw new Error('no sends');
        },
        keepSeconds: 3600,
        now: () => now,
        out: { line: () => undefined, progress: () => undefined },
      }),
    policy: () => ({ markerTtlSeconds: 3600 }) as never,
  });
  addGroupsCommands(program, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), now: () => now }, (c) => (code = c), connections);
  await program.parseAsync(['groups', ...args], { from: 'user' });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('groups over a flooded dead-letter queue', () => {
  it('stops after --scan-max messages of an entity, says so with the counts it has, and exits 1', async () => {
    const queue = floodedQueue(1_000_000, (n) => ({ subject: 'OrderPlaced', deadLetterReason: n % 2 ? 'A' : 'B' }));
    const run = await runGroups(queue.receiver, ['--json', '--scan-max', '1000']);
    expect(queue.peeked()).toBeLessThanOrEqual(1000);
    const { groups, truncated } = JSON.parse(run.stdout) as { groups: FailureGroup[]; truncated: string[] };
    expect(groups.map((g) => [g.reason, g.count])).toEqual([
      ['A', 500],
      ['B', 500],
    ]);
    expect(truncated).toEqual(['orders/$deadletterqueue: stopped after 1000 messages']);
    expect(run.stderr).toContain(
      'warning: orders/$deadletterqueue: stopped after 1000 messages (in sequence order): counts and members leave out any further ones',
    );
    expect(run.code).toBe(1);
  });

  it('scans at most 100000 messages of an entity by default', async () => {
    const queue = floodedQueue(1_000_000, () => ({ subject: 'OrderPlaced', deadLetterReason: 'A' }));
    const run = await runGroups(queue.receiver, ['--json']);
    expect(queue.peeked()).toBe(100_000);
    expect((JSON.parse(run.stdout) as { groups: FailureGroup[] }).groups.map((g) => g.count)).toEqual([100_000]);
    expect(run.code).toBe(1);
  }, 30_000);

  it('keeps at most 1000 groups when a sender varies the subject on every message, counting the rest as left out', async () => {
    const queue = floodedQueue(5_000, (n) => ({ subject: `T-${n}`, deadLetterReason: 'A' }));
    const run = await runGroups(queue.receiver, ['--json']);
    const { groups, truncated } = JSON.parse(run.stdout) as { groups: FailureGroup[]; truncated: string[] };
    expect(groups).toHaveLength(1000);
    expect(truncated).toEqual(['4000 failure(s) in groups past the first 1000 not shown']);
    expect(run.code).toBe(1);
  });

  it('exits 0 with nothing truncated when the whole queue was read', async () => {
    const queue = floodedQueue(300, () => ({ subject: 'OrderPlaced', deadLetterReason: 'A' }));
    const run = await runGroups(queue.receiver, ['--json']);
    expect(JSON.parse(run.stdout)).toMatchObject({ groups: [{ count: 300 }], truncated: [], unread: [] });
    expect(run.code).toBe(0);
  });
});

describe('groups over a flooded store', () => {
  it('reads at most --scan-max parked items of each state, the oldest, and says so', async () => {
    const store = new InMemoryDocumentStore();
    for (let n = 30; n >= 1; n -= 1) {
      const parkedAt = new Date(start + n * 1000).toISOString();
      const document = {
        id: `p-${n}`,
        orderId: `o-${n}`,
        docType: 'parked',
        state: 'rejected',
        messageType: 'PaymentReceived',
        parkedAt,
        rejection: { reason: 'OrderNeverArrived', rejectedAt: parkedAt },
      };
      await store.commit(`o-${n}`, [{ kind: 'create', document }]);
    }
    const run = await runGroups(floodedQueue(0, () => ({})).receiver, ['--json', '--scan-max', '10'], store);
    const { groups, truncated } = JSON.parse(run.stdout) as { groups: FailureGroup[]; truncated: string[] };
    expect(groups.map((g) => [g.entity, g.count, g.oldest])).toEqual([['parked', 10, new Date(start + 1000).toISOString()]]);
    expect(truncated).toEqual(['parked items (rejected): stopped after 10']);
    expect(run.stderr).toContain('warning: parked items (rejected): stopped after 10 (oldest first)');
    expect(run.code).toBe(1);
  });
});

describe('deadLetterItem', () => {
  it('bounds the reason and the message type a sender or the broker set (a table cell and a group key, not a payload)', () => {
    const item = deadLetterItem(
      { sequenceNumber: Long.fromNumber(1), subject: 'S'.repeat(100_000), deadLetterReason: 'R'.repeat(100_000) } as ServiceBusReceivedMessage,
      'orders',
    );
    expect(item.messageType).toHaveLength(128);
    expect(item.messageType.endsWith('…')).toBe(true);
    expect(item.reason).toHaveLength(128);
  });
});
