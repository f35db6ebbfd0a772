import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import Long from 'long';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { bulkCommandPaths, planPrefix } from '../../src/cli/bulkCommands.js';
import type { FailureGroup } from '../../src/cli/failureGroups.js';
import type { OperatorActionDocument } from '../../src/cli/operatorAction.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import type { ParkedItemDocument } from '../../src/orders/index.js';
import type { OutboxDocument } from '../../src/outbox/index.js';
import { orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { runOperatorTool } from '../support/operatorTool.js';

// Every bulk command, against the stand-ins: without --yes it only shows its plan (nothing changes,
// nothing is recorded); with --yes it acts on a group, a window and at most --max members, and its
// operator-action record names those filters.
let stack: LocalStack;
let cosmos: CosmosClient;
let container: Container;
let serviceBus: ServiceBusClient;

const minute = 60_000;
const startedAt = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  serviceBus = new ServiceBusClient(stack.serviceBus.connectionString);
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database('orders').container('orders');
  // No consumer runs: what the tool sends stays in the queue, where the test counts it.
  const sender = serviceBus.createSender('orders');
  for (const id of ['blk-1', 'blk-2', 'blk-3'])
    await sender.sendMessages({ messageId: id, subject: 'OrderPlaced', contentType: 'application/json', body: orderPlaced(id) });
  await sender.close();
  const receiver = serviceBus.createReceiver('orders');
  for (let left = 3; left > 0;) {
    for (const m of await receiver.receiveMessages(3, { maxWaitTimeInMs: 2000 })) {
      await receiver.deadLetterMessage(m, { deadLetterReason: 'ConsumerBug', deadLetterErrorDescription: 'fixed since' });
      left -= 1;
    }
  }
  await receiver.close();
  for (const [i, orderId] of ['blk-o1', 'blk-o2', 'blk-o3'].entries()) {
    await container.items.create(parkedItem(orderId, startedAt - (3 - i) * minute));
    await container.items.create(failedOutboxEntry(orderId, startedAt - (3 - i) * minute));
  }
}, 60_000);
afterAll(async () => {
  await serviceBus.close();
  cosmos.dispose();
  await stack.close();
});

function parkedItem(orderId: string, rejectedAtMs: number): ParkedItemDocument {
  const payload = paymentReceived(orderId) as ParkedItemDocument['payload'];
  return {
    id: `parked-${orderId}`,
    orderId,
    docType: 'parked',
    state: 'rejected',
    messageType: 'PaymentReceived',
    messageId: `pay-${orderId}`,
    dedupKey: `pay-${orderId}`,
    fingerprint: 'f',
    payload,
    parkedAt: iso(rejectedAtMs - minute),
    rejection: { reason: 'OrderNeverArrived', description: 'its order never came', rejectedAt: iso(rejectedAtMs) },
  };
}

function failedOutboxEntry(orderId: string, createdAtMs: number): OutboxDocument {
  return {
    id: `outbox-${orderId}`,
    orderId,
    docType: 'outbox',
    eventType: 'OrderAccepted',
    destination: 'gone-topic',
    message: { messageId: `outbox|OrderAccepted|${orderId}`, subject: 'OrderAccepted', body: { orderId } } as OutboxDocument['message'],
    createdAt: iso(createdAtMs),
    state: 'failed',
    publishedAt: null,
    failure: { reason: 'MessagingEntityNotFound', detail: 'gone-topic', at: iso(createdAtMs) },
  };
}

const tool = (...args: string[]) => runOperatorTool(stack, args);

/** Everything a bulk command could change: dead letters, the queue, parked items, outbox entries, operator-action records. */
async function state() {
  const peek = async (subQueueType?: 'deadLetter') => {
    const receiver = serviceBus.createReceiver('orders', subQueueType ? { subQueueType } : {});
    const seen = (await receiver.peekMessages(100, { fromSequenceNumber: Long.fromNumber(0) })).map((m) => String(m.messageId));
    await receiver.close();
    return seen.sort();
  };
  const docs = async <T extends { id: string; state: string }>(docType: string) =>
    (await container.items.query<T>({ query: 'SELECT * FROM c WHERE c.docType = @t', parameters: [{ name: '@t', value: docType }] }).fetchAll()).resources
      .map((d) => `${d.id}:${d.state}`)
      .sort();
  return {
    deadLetters: await peek('deadLetter'),
    queued: await peek(),
    parked: await docs<ParkedItemDocument>('parked'),
    outbox: await docs<OutboxDocument>('outbox'),
    actions: await docs<OperatorActionDocument>('operator-action'),
  };
}

async function groupOf(entity: string): Promise<string> {
  const { groups } = JSON.parse((await tool('groups', '--json')).stdout) as { groups: FailureGroup[] };
  const group = groups.find((g) => g.entity === entity);
  if (!group) throw new Error(`no group of ${entity} in ${JSON.stringify(groups)}`);
  return group.id;
}

/** Bulk runs of each bulk command, none with --yes; a new bulk command must be added here. */
const bulkRuns = async (): Promise<Record<string, string[][]>> => ({
  resubmit: [
    ['resubmit', '--all'],
    ['resubmit', 'blk-1', 'blk-2'],
    ['resubmit', '--group', await groupOf('orders/$deadletterqueue'), '--why', 'consumer fixed'],
  ],
  purge: [
    ['purge', '--all', '--why', 'test data'],
    ['purge', '--reason', 'ConsumerBug', '--ticket', 'INC-1'],
  ],
  'parked resubmit': [
    ['parked', 'resubmit', '--all'],
    ['parked', 'resubmit', '--since', '1h'],
  ],
  'parked discard': [
    ['parked', 'discard', '--reason', 'OrderNeverArrived', '--why', 'wrong ids'],
    ['parked', 'discard', 'blk-o1/parked-blk-o1', 'blk-o2/parked-blk-o2'],
  ],
  'outbox requeue': [
    ['outbox', 'requeue', '--all'],
    ['outbox', 'requeue', '--group', await groupOf('outbox -> gone-topic'), '--yes', '--dry-run'],
  ],
  'groups retry': [
    ['groups', 'retry', await groupOf('parked')],
    ['groups', 'retry', await groupOf('orders/$deadletterqueue'), '--dry-run'],
  ],
});

describe('bulk commands on the local stack', () => {
  it('change nothing and record nothing without --yes: each only shows its plan', async () => {
    const runs = await bulkRuns();
    expect(Object.keys(runs).sort()).toEqual([...bulkCommandPaths].sort());
    const before = await state();
    expect(before).toMatchObject({ deadLetters: ['blk-1', 'blk-2', 'blk-3'], queued: [], actions: [] });
    for (const argv of Object.values(runs).flat()) {
      const run = await tool(...argv);
      expect(run, argv.join(' ')).toMatchObject({ code: 0, stdout: expect.stringContaining(planPrefix) });
      expect(run.stdout, argv.join(' ')).toMatch(/would-/);
      expect(await state(), argv.join(' ')).toEqual(before);
    }
  }, 120_000);

  it('act with --yes on the group, the window and at most --max members, oldest first, and record those filters', async () => {
    const dlqGroup = await groupOf('orders/$deadletterqueue');
    const since = iso(startedAt - 10 * minute);
    const resubmit = await tool('resubmit', '--group', dlqGroup, '--since', since, '--until', '0s', '--max', '1', '--yes', '--why', 'consumer fixed');
    expect(resubmit).toMatchObject({ code: 0, stdout: expect.stringContaining('resubmitted 1') });
    expect(resubmit.stdout).not.toContain(planPrefix);
    const purge = await tool(
      'purge',
      '--group',
      dlqGroup,
      '--max',
      '1',
      '--yes',
      '--why',
      'test data',
      '--export',
      join(await mkdtemp(join(tmpdir(), 'bulk-')), 'purged.jsonl'),
    );
    expect(purge).toMatchObject({ code: 0, stdout: expect.stringContaining('purged 1') });
    expect(await tool('parked', 'resubmit', '--since', '1h', '--max', '1', '--yes', '--why', 'orders stored since')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('resubmitted 1'),
    });
    expect(
      await tool('parked', 'discard', '--reason', 'OrderNeverArrived', '--until', iso(startedAt - 90_000), '--max', '5', '--yes', '--why', 'wrong order ids'),
    ).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('discarded 1'),
    });
    const outboxGroup = await groupOf('outbox -> gone-topic');
    expect(await tool('outbox', 'requeue', '--group', outboxGroup, '--max', '2', '--yes', '--ticket', 'INC-9')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('requeued 2'),
    });
    expect(await tool('groups', 'retry', outboxGroup, '--yes', '--why', 'topic deployed')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('requeued 1'),
    });

    const after = await state();
    // The oldest dead letter resubmitted, the next purged; the oldest parked item resubmitted, the next discarded (the window ends before the third).
    expect(after).toMatchObject({
      deadLetters: ['blk-3'],
      queued: [expect.stringMatching(/^blk-1~resubmit-1-[0-9a-f]{12}$/), expect.stringMatching(/^pay-blk-o1~resubmit-1-[0-9a-f]{12}$/)],
      parked: ['parked-blk-o1:resubmitted', 'parked-blk-o2:discarded', 'parked-blk-o3:rejected'],
      outbox: ['outbox-blk-o1:pending', 'outbox-blk-o2:pending', 'outbox-blk-o3:pending'],
    });

    const records = JSON.parse((await tool('audit', '--json')).stdout) as OperatorActionDocument[];
    const optionsOf = (command: string) => records.find((r) => r.command === command)?.options;
    expect(optionsOf('resubmit')).toMatchObject({
      group: dlqGroup,
      since: iso(Date.parse(since)),
      until: expect.stringMatching(/^20\d\d-.*Z$/),
      max: 1,
      yes: true,
    });
    expect(optionsOf('purge')).toMatchObject({ group: dlqGroup, max: 1 });
    const parkedSince = optionsOf('parked resubmit')?.since as string;
    expect(Date.parse(parkedSince)).toBeGreaterThan(startedAt - 61 * minute);
    expect(Date.parse(parkedSince)).toBeLessThanOrEqual(Date.now() - 60 * minute);
    expect(optionsOf('parked discard')).toMatchObject({ reason: 'OrderNeverArrived', until: iso(startedAt - 90_000), max: 5 });
    expect(optionsOf('outbox requeue')).toMatchObject({ group: outboxGroup, max: 2 });
    expect(records.find((r) => r.command === 'groups retry')).toMatchObject({
      targets: [outboxGroup],
      options: expect.objectContaining({ max: 100, yes: true }),
    });
    expect(records.map((r) => [r.command, r.exitCode])).toEqual([
      ['resubmit', 0],
      ['purge', 0],
      ['parked resubmit', 0],
      ['parked discard', 0],
      ['outbox requeue', 0],
      ['groups retry', 0],
    ]);
  }, 120_000);
});
