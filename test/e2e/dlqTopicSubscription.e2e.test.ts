import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRule, sqlFilter, startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { InMemoryDocumentStore } from '../../src/idempotency/index.js';
import { testQueue } from '../support/waiting.js';

// The dead-letter tool's topic-subscription mode, against the emulator's topics.
let emulator: ServiceBusEmulator;
let client: ServiceBusClient;

beforeAll(async () => {
  const settings = testQueue({ maxDeliveryCount: 1, duplicateDetectionWindowMs: 0 });
  // audit takes what is addressed to nobody, as in infra/servicebus-queues.json; "everything" plays a subscriber without that rule.
  const fulfilment = { settings, rules: [defaultRule] };
  const audit = { settings, rules: [{ name: 'events', filter: sqlFilter('sys.To IS NULL') }] };
  emulator = await startServiceBusEmulator({
    port: 0,
    queues: {},
    topics: {
      events: {
        settings: { defaultMessageTimeToLiveMs: 3_600_000, duplicateDetectionWindowMs: 0 },
        subscriptions: { fulfilment, audit, everything: fulfilment },
      },
    },
  });
  client = new ServiceBusClient(emulator.connectionString);
  const sender = client.createSender('events');
  await sender.sendMessages([
    { messageId: 'evt-1', subject: 'OrderAccepted', body: { orderId: 'o-1' } },
    { messageId: 'evt-2', subject: 'OrderAccepted', body: { orderId: 'o-2' } },
  ]);
  await sender.close();
  // The fulfilment consumer gives up on both: dead-lettered there with a reason, not in audit.
  const receiver = client.createReceiver('events', 'fulfilment');
  for (const m of await receiver.receiveMessages(2, { maxWaitTimeInMs: 3000 })) {
    await receiver.deadLetterMessage(m, { deadLetterReason: 'CarrierRejected', deadLetterErrorDescription: `no carrier for ${String(m.messageId)}` });
  }
  await receiver.close();
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});

// Operator-action records go to memory here: this file has no Cosmos DB.
const actionLog = new InMemoryDocumentStore();

async function dlq(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDlqCli(['--connection-string', emulator.connectionString, '--topic', 'events', '--subscription', 'fulfilment', ...args], {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: {},
    actions: { store: actionLog },
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('the dead-letter tool on a topic subscription', () => {
  it("lists that subscription's dead letters with their reasons, and only them", async () => {
    const listed = await dlq('list', '--json');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(
      (JSON.parse(listed.stdout) as { messages: { messageId: string; deadLetterReason: string }[] }).messages.map((r) => [r.messageId, r.deadLetterReason]),
    ).toEqual([
      ['evt-1', 'CarrierRejected'],
      ['evt-2', 'CarrierRejected'],
    ]);
    expect(emulator.entity('events/subscriptions/audit/$deadletterqueue')?.messages.size).toBe(0);
  });

  it("resubmits through the topic addressed to the subscription (`to`): the project's rules give the copy to it alone", async () => {
    expect(await dlq('resubmit', 'evt-1')).toMatchObject({ code: 0, stdout: expect.stringMatching(/evt-1 -> evt-1~resubmit-1-[0-9a-f]{12} {2}resubmitted/) });
    const fulfilment = client.createReceiver('events', 'fulfilment');
    const [copy] = await fulfilment.receiveMessages(1, { maxWaitTimeInMs: 3000 });
    expect({ id: copy?.messageId, key: copy?.applicationProperties?.['idempotency-key'], to: copy?.to }).toEqual({
      id: expect.stringMatching(/^evt-1~resubmit-1-[0-9a-f]{12}$/),
      key: 'evt-1',
      to: 'fulfilment',
    });
    await fulfilment.completeMessage(copy!);
    await fulfilment.close();
    // audit, whose rule takes only unaddressed messages, never sees the copy.
    const audit = client.createReceiver('events', 'audit', { receiveMode: 'receiveAndDelete' });
    expect((await audit.receiveMessages(10, { maxWaitTimeInMs: 1000 })).map((m) => String(m.messageId)).sort()).toEqual(['evt-1', 'evt-2']);
    await audit.close();
    // A subscriber without such a rule sees it, with the original key to deduplicate it by.
    const everything = client.createReceiver('events', 'everything', { receiveMode: 'receiveAndDelete' });
    expect((await everything.receiveMessages(10, { maxWaitTimeInMs: 1000 })).map((m) => String(m.messageId)).sort()).toEqual([
      'evt-1',
      copy?.messageId,
      'evt-2',
    ]);
    await everything.close();
  });

  it("purges from that subscription's dead-letter queue only", async () => {
    expect(
      await dlq('purge', 'evt-2', '--yes', '--why', 'no carrier will take it', '--export', join(await mkdtemp(join(tmpdir(), 'purge-')), 'evt-2.jsonl')),
    ).toMatchObject({ code: 0, stdout: expect.stringContaining('purged 1') });
    expect(JSON.parse((await dlq('list', '--json')).stdout)).toEqual({ messages: [], truncated: [] });
  });

  it('names a subscription that does not exist', async () => {
    const err: string[] = [];
    const missing = await runDlqCli(['--connection-string', emulator.connectionString, '--topic', 'events', '--subscription', 'nope', 'list'], {
      stdout: () => {},
      stderr: (t) => err.push(t),
      env: {},
    });
    expect({ missing, err: err.join('\n') }).toEqual({ missing: 2, err: expect.stringContaining('events/Subscriptions/nope') });
  });
});
