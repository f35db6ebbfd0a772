import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusMessage } from '@azure/service-bus';
import Long from 'long';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { QueueSettings, ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import type { DlqIo } from '../../src/cli/dlqProgram.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { loadProcessOrder, outcomeLine } from '../support/processOrderHarness.js';
import { eventually, testQueue } from '../support/waiting.js';

const queue = (overrides: Partial<QueueSettings>) => testQueue({ lockDurationMs: 2_000, maxDeliveryCount: 3, ...overrides });

let cosmos: CosmosClient;
let container: Container;
let processOrder: RegisteredFunction;
let emulator: ServiceBusEmulator;
let producer: ServiceBusClient;
const hosts: LocalFunctionsHost[] = [];
const outcomes: { queue: string; messageId?: string; outcome: string }[] = [];
const crashing = new Set<string>();

beforeAll(async () => {
  cosmos = testCosmosClient();
  container = await createOrdersContainer(cosmos);
  processOrder = await loadProcessOrder(container);
  emulator = await startServiceBusEmulator({
    port: 0,
    queues: { orders: queue({}), 'orders-nodup': queue({ duplicateDetectionWindowMs: 0 }), bulk: queue({ maxDeliveryCount: 1 }) },
  });
  producer = new ServiceBusClient(emulator.connectionString);
  for (const name of ['orders', 'orders-nodup']) {
    hosts.push(
      startLocalFunctionsHost([processOrder], {
        settings: { ServiceBusConnection: emulator.connectionString, ORDERS_QUEUE_NAME: name },
        host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
        onInvocation: (_fn, delivery, result) => outcomes.push({ queue: name, messageId: delivery.messageId, outcome: String(outcomeLine(result).outcome) }),
        // A consumer that dies on these messages before it writes anything: abandoned until dead-lettered.
        beforeInvocation: async (delivery) => {
          if (crashing.has(delivery.messageId ?? '')) throw new Error(`the consumer crashed on ${delivery.messageId}`);
        },
      }),
    );
  }
});
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await producer.close();
  await emulator.close();
  cosmos.dispose();
});

async function dlq(args: string[], io: Partial<DlqIo> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runDlqCli(
    [
      '--connection-string',
      emulator.connectionString,
      '--cosmos-endpoint',
      inject('cosmosEndpoint'),
      '--cosmos-key',
      inject('cosmosKey'),
      '--cosmos-database',
      process.env.COSMOS_DATABASE ?? '',
      '--cosmos-container',
      container.id,
      ...args,
    ],
    { stdout: (t) => stdout.push(t), stderr: (t) => stderr.push(t), env: {}, ...io },
  );
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

const deadLettered = (name: string) => emulator.entity(`${name}/$DeadLetterQueue`)?.messages.size ?? 0;
const inDeadLetters = (name: string, messageId: string) =>
  [...(emulator.entity(`${name}/$DeadLetterQueue`)?.messages.values() ?? [])].some((m) => String(m.message.message_id) === messageId);
const send = (name: string, message: ServiceBusMessage) => producer.createSender(name).sendMessages(message);
const placed = (orderId: string): ServiceBusMessage => ({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' });
const paid = (orderId: string, messageId: string): ServiceBusMessage => ({
  body: paymentReceived(orderId, { paymentId: messageId, amount: 7 }),
  messageId,
  subject: 'PaymentReceived',
});

async function amountPaid(orderId: string): Promise<number | undefined> {
  return ((await container.item(orderId, orderId).read()).resource as { amountPaid?: number } | undefined)?.amountPaid;
}

async function placeAndWait(name: string, orderId: string) {
  await send(name, placed(orderId));
  await eventually(`order ${orderId}`, async () => (await amountPaid(orderId)) !== undefined);
}

/**
 * A payment whose consumer crashed on every delivery, before its order was stored: dead-lettered
 * with nothing written, the kind of failure an operator resubmits once the cause is fixed.
 */
async function earlyPayment(name: string, orderId: string, messageId: string) {
  crashing.add(messageId);
  await send(name, paid(orderId, messageId));
  await eventually(`${messageId} in the dead-letter queue`, () => inDeadLetters(name, messageId));
  crashing.delete(messageId);
}

describe('the dead-letter tool', () => {
  beforeAll(async () => {
    await placeAndWait('orders', 'o-a');
    await send('orders', { ...placed('o-a'), messageId: 'conflict-a', body: orderPlaced('o-a', { customerId: 'someone-else' }) });
    await send('orders', { body: '{"orderId": ', messageId: 'bad-json', subject: 'OrderPlaced' });
    await earlyPayment('orders', 'o-b', 'pay-b');
    await eventually('three dead letters', () => deadLettered('orders') === 3);
  });

  it('lists each dead-lettered message with its reason and what the store knows of it', async () => {
    const { code, stdout } = await dlq(['list', '--json']);
    expect(code).toBe(0);
    const rows = (JSON.parse(stdout) as { messages: unknown }).messages as {
      messageId: string;
      dedupKey: string;
      deadLetterReason: string;
      store: { kind: string; detail: string };
    }[];
    const byId = Object.fromEntries(rows.map((r) => [r.messageId, r]));
    expect(Object.keys(byId).sort()).toEqual(['bad-json', 'conflict-a', 'pay-b']);
    expect(byId['conflict-a']).toMatchObject({
      deadLetterReason: 'MaxDeliveryCountExceeded',
      dedupKey: 'conflict-a',
      store: { kind: 'conflict', detail: expect.stringContaining('PayloadConflict') },
    });
    expect(byId['bad-json']?.store).toMatchObject({ kind: 'invalid', detail: expect.stringContaining('InvalidJson') });
    expect(byId['pay-b']?.store).toMatchObject({ kind: 'not-processed', detail: 'payment not applied; order o-b is not stored' });
  });

  it('filters by reason and body text, and prints a table for people', async () => {
    expect((await dlq(['list', '--reason', 'SomethingElse'])).stdout).toContain('0 dead-lettered message(s)');
    const table = await dlq(['list', '--body-contains', 'o-b']);
    expect(table.stdout).toMatch(/SEQ\s+MESSAGE ID\s+DEDUP KEY\s+REASON/);
    expect(table.stdout).toContain('pay-b');
    expect(table.stdout).not.toContain('conflict-a');
  });

  it('shows every property and the body of one message, by MessageId or sequence number', async () => {
    const shown = JSON.parse((await dlq(['show', 'conflict-a'])).stdout) as { sequenceNumber: number; body: { customerId: string }; deadLetterReason: string };
    expect(shown).toMatchObject({ deadLetterReason: 'MaxDeliveryCountExceeded', body: { customerId: 'someone-else' } });
    expect(JSON.parse((await dlq(['show', String(shown.sequenceNumber)])).stdout)).toMatchObject({ messageId: 'conflict-a' });
    expect(await dlq(['show', 'no-such-message'])).toMatchObject({ code: 1, stderr: expect.stringContaining('no dead-lettered message') });
  });

  it('shows, for a conflict, the stored order it conflicts with, both fingerprints and the differing fields', async () => {
    const shown = JSON.parse((await dlq(['show', 'conflict-a'])).stdout) as {
      stored: Record<string, unknown> & { fingerprints: { message: string; stored: string } };
    };
    expect(shown.stored).toMatchObject({
      target: { id: 'o-a', document: { docType: 'order', customerId: 'c-42', messageId: 'm-o-a' } },
      differences: [{ path: 'customerId', message: 'someone-else', stored: 'c-42' }],
      rejection: { reason: 'PayloadConflict', messageId: 'conflict-a' },
      conflict: { docType: 'conflict', incoming: { messageId: 'conflict-a' }, existing: { messageId: 'm-o-a', documentId: 'o-a' } },
    });
    expect(shown.stored.fingerprints.message).not.toBe(shown.stored.fingerprints.stored);
    expect(shown.stored.fingerprints.stored).toMatch(/^[0-9a-f]{64}$/);
  });

  it('shows, for an unreadable message, that it reaches no record, and why', async () => {
    const shown = JSON.parse((await dlq(['show', 'bad-json'])).stdout) as { stored: { note: string; rejection: { reason: string } } };
    expect(shown.stored).toMatchObject({ rejection: { reason: 'InvalidJson' }, note: expect.stringContaining('cannot be parsed') });
  });

  it('resubmits a failed message once the cause is gone, which is then processed exactly once', async () => {
    await placeAndWait('orders', 'o-b');
    const result = await dlq(['resubmit', 'pay-b']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/pay-b -> pay-b~resubmit-1-[0-9a-f]{12} {2}resubmitted {2}new MessageId/);
    await eventually('the payment', async () => (await amountPaid('o-b')) === 7);
    expect(inDeadLetters('orders', 'pay-b')).toBe(false);
  });

  it('keeps a dedup key that the broker would otherwise eat: a naive same-MessageId resubmit is dropped', async () => {
    await earlyPayment('orders', 'o-c', 'pay-c');
    await placeAndWait('orders', 'o-c');
    const droppedBefore = emulator.entity('orders')?.duplicatesDropped ?? 0;
    await send('orders', paid('o-c', 'pay-c')); // what a portal tool does: same MessageId, inside the window
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(emulator.entity('orders')?.duplicatesDropped).toBe(droppedBefore + 1);
    expect(await amountPaid('o-c')).toBe(0);

    expect((await dlq(['resubmit', 'pay-c'])).code).toBe(0);
    await eventually('the payment', async () => (await amountPaid('o-c')) === 7);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await amountPaid('o-c')).toBe(7);
  });

  it('resubmits a conflict, which conflicts again and returns to the dead-letter queue, the order untouched', async () => {
    const result = await dlq(['resubmit', 'conflict-a', '--json']);
    const resubmitted = JSON.parse(result.stdout) as { reports: { copyMessageId: string }[] };
    expect(resubmitted).toMatchObject({
      failed: 0,
      missing: 0,
      reports: [{ outcome: 'resubmitted', copyMessageId: expect.stringMatching(/^conflict-a~resubmit-1-[0-9a-f]{12}$/) }],
    });
    const copyId = resubmitted.reports[0]!.copyMessageId;
    await eventually('the copy back in the dead-letter queue', () => inDeadLetters('orders', copyId));
    const shown = JSON.parse((await dlq(['show', copyId])).stdout) as { applicationProperties: Record<string, unknown> };
    expect(shown.applicationProperties).toMatchObject({
      'resubmit-count': 1,
      'idempotency-key': 'conflict-a',
      'resubmitted-from': expect.stringMatching(/^orders\/\$DeadLetterQueue#\d+$/),
    });
    // The copy was itself dead-lettered (it conflicts again), so it carries a DeadLetterReason of its own.
    expect(shown.applicationProperties).toMatchObject({ DeadLetterReason: 'MaxDeliveryCountExceeded' });
    expect(((await container.item('o-a', 'o-a').read()).resource as { customerId: string }).customerId).toBe('c-42');
  });

  it('survives a crash between the send of the copy and the removal of the original, with one effect', async () => {
    // No duplicate detection here, so the broker cannot help: only the consumer's dedup can.
    await earlyPayment('orders-nodup', 'o-d', 'pay-d');
    await placeAndWait('orders-nodup', 'o-d');
    const crashed = await dlq(['--queue', 'orders-nodup', 'resubmit', 'pay-d'], {
      hooks: {
        afterSend: () => {
          throw new Error('the process died here');
        },
      },
    });
    expect(crashed).toMatchObject({ code: 1, stdout: expect.stringContaining('failed  the process died here') });
    await eventually('the first copy', async () => (await amountPaid('o-d')) === 7);
    await eventually('the original to be unlocked', async () => (await dlq(['--queue', 'orders-nodup', 'resubmit', 'pay-d'])).code === 0, 10_000);
    // Each attempt's copy has an id of its own (pay-d~resubmit-1-<nonce>); both carry the key pay-d.
    const copies = () => outcomes.filter((o) => o.queue === 'orders-nodup' && o.messageId?.startsWith('pay-d~resubmit-1-') === true).map((o) => o.outcome);
    await eventually('the second copy', () => copies().length === 2);
    expect(copies()).toEqual(['created', 'duplicate']);
    expect(await amountPaid('o-d')).toBe(7);
    expect(inDeadLetters('orders-nodup', 'pay-d')).toBe(false);
  });

  it('purges only with a why and --yes or a confirmation, writes what it removes to a file first, and records who did it', async () => {
    const exportPath = join(await mkdtemp(join(tmpdir(), 'purge-')), 'bad-json.jsonl');
    expect(await dlq(['purge', 'bad-json', '--yes'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('purge: this command cannot be undone: say why with --why <text> or --ticket <id>'),
    });
    expect(await dlq(['purge', 'bad-json', '--why', 'unparseable'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('refusing to purge 1 message(s) without --yes'),
    });
    expect(await dlq(['purge', 'bad-json', '--why', 'unparseable'], { confirm: async () => false })).toMatchObject({
      code: 0,
      stderr: expect.stringContaining('nothing purged'),
    });
    expect(inDeadLetters('orders', 'bad-json')).toBe(true);
    const dryRun = await dlq(['purge', '--all', '--dry-run']);
    expect(dryRun.stdout).toContain('bad-json  would-purge');
    expect(inDeadLetters('orders', 'bad-json')).toBe(true);
    const purged = await dlq(['--operator', 'ops-on-call', 'purge', 'bad-json', '--yes', '--why', 'unparseable', '--ticket', 'INC-42', '--export', exportPath]);
    expect(purged).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('purged 1'),
      stderr: expect.stringContaining(`exported 1 message(s) to ${exportPath}`),
    });
    expect(inDeadLetters('orders', 'bad-json')).toBe(false);
    const exported = (await readFile(exportPath, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { messageId: string });
    expect(exported).toEqual([expect.objectContaining({ messageId: 'bad-json' })]);

    const audit = await dlq(['audit', '--since', '1h', '--json']);
    const purges = (
      JSON.parse(audit.stdout) as {
        command: string;
        state: string;
        exitCode?: number;
        why?: string;
        ticket?: string;
        targets: string[];
        operator: { name: string };
        options: { export?: string };
      }[]
    ).filter((r) => r.command === 'purge');
    expect(purges.at(-1)).toMatchObject({
      state: 'finished',
      exitCode: 0,
      why: 'unparseable',
      ticket: 'INC-42',
      targets: ['bad-json'],
      operator: { name: 'ops-on-call' },
      options: { export: exportPath },
    });
    expect((await dlq(['audit'])).stdout).toMatch(/ops-on-call\s+purge\s+exit 0\s+bad-json\s+INC-42: unparseable/);
  });

  it('refuses to guess what to act on, and names a bad option', async () => {
    expect(await dlq(['resubmit'])).toMatchObject({ code: 2, stderr: expect.stringContaining('name messages by sequence number or MessageId, or use --all') });
    expect(await dlq(['list', '--older-than', '5 minutes'])).toMatchObject({ code: 2, stderr: expect.stringContaining('"5 minutes" is not a duration') });
    expect(await dlq(['resubmit', 'nothing-by-this-id'])).toMatchObject({ code: 1, stdout: expect.stringContaining('1 named message(s) not found') });
  });
});

describe('the dead-letter tool on 1,000 messages', () => {
  it('lists and resubmits them all', async () => {
    const sender = producer.createSender('bulk');
    for (let i = 0; i < 1000; i += 250) {
      await sender.sendMessages(
        Array.from({ length: 250 }, (_, j) => ({ messageId: `bulk-${i + j}`, subject: 'OrderPlaced', body: orderPlaced(`bulk-${i + j}`) })),
      );
    }
    const receiver = producer.createReceiver('bulk');
    while (deadLettered('bulk') < 1000) {
      const batch = await receiver.receiveMessages(200, { maxWaitTimeInMs: 500 });
      await Promise.all(batch.map((m) => receiver.deadLetterMessage(m, { deadLetterReason: 'Bulk', deadLetterErrorDescription: 'for the test' })));
    }
    await receiver.close();

    const listStarted = performance.now();
    const listed = await dlq(['--queue', 'bulk', 'list', '--json']);
    const listMs = performance.now() - listStarted;
    expect((JSON.parse(listed.stdout) as { messages: unknown[] }).messages.length).toBe(1000);

    const resubmitStarted = performance.now();
    const resubmitted = await dlq(['--queue', 'bulk', 'resubmit', '--all', '--yes', '--max', '1000', '--why', 'load test', '--json']);
    const resubmitMs = performance.now() - resubmitStarted;
    expect(JSON.parse(resubmitted.stdout)).toMatchObject({ failed: 0 });
    expect((JSON.parse(resubmitted.stdout) as { reports: unknown[] }).reports).toHaveLength(1000);
    expect(deadLettered('bulk')).toBe(0);
    expect(emulator.entity('bulk')?.messages.size).toBe(1000);
    const peeked = await producer.createReceiver('bulk').peekMessages(1, { fromSequenceNumber: Long.fromNumber(0) });
    expect(peeked[0]?.applicationProperties).toMatchObject({ 'resubmit-count': 1 });
    console.log(`1,000 dead letters: list ${Math.round(listMs)} ms, resubmit ${Math.round(resubmitMs)} ms (emulator and stand-in in process)`);
  }, 120_000);
});
