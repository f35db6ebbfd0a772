import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { runOperatorTool } from '../support/operatorTool.js';
import { eventually } from '../support/waiting.js';

// Edit and resubmit on the local stack: a wrong payment fixed and applied once; an applied one refused.
let stack: LocalStack;
let host: LocalFunctionsHost | undefined;
let client: ServiceBusClient;
const wrong = paymentReceived('ed-1', { paymentId: 'p-wrong', amount: 12, currency: 'USD' });
const applied = paymentReceived('ed-1', { paymentId: 'p-applied', amount: 3 });

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings);
  client = new ServiceBusClient(stack.serviceBus.connectionString);
  const sender = client.createSender('orders');
  // A payment dead-lettered by hand before any consumer runs, whose effect a second copy then applies.
  await sender.sendMessages({ messageId: 'pay-applied', subject: 'PaymentReceived', body: applied });
  const receiver = client.createReceiver('orders');
  const [m] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 3000 });
  await receiver.deadLetterMessage(m!, { deadLetterReason: 'ConsumerBug', deadLetterErrorDescription: 'fixed since' });
  await receiver.close();
  await import('../../functions/processOrder.js');
  const processOrder = [...registeredFunctions()].reverse().find((f) => f.metadata.name === 'processOrder')!;
  host = startLocalFunctionsHost([processOrder], {
    settings: stack.settings,
    host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
  });
  await sender.sendMessages({ messageId: 'ed-1-placed', subject: 'OrderPlaced', body: orderPlaced('ed-1') });
  await eventually('the order', async () => (await order()) !== undefined, 30_000);
  await sender.sendMessages({
    messageId: 'pay-applied-again',
    subject: 'PaymentReceived',
    body: applied,
    applicationProperties: { 'idempotency-key': 'pay-applied' },
  });
  await sender.sendMessages({ messageId: 'pay-wrong', subject: 'PaymentReceived', body: wrong });
  await sender.close();
}, 90_000);
afterAll(async () => {
  await host?.close();
  await client.close();
  await stack.close();
});

async function order(): Promise<{ amountPaid?: number } | undefined> {
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  try {
    return (await cosmos.database('orders').container('orders').item('ed-1', 'ed-1').read()).resource as { amountPaid?: number } | undefined;
  } finally {
    cosmos.dispose();
  }
}

const dlq = (...args: string[]) => runOperatorTool(stack, args);

const listed = async () => (JSON.parse((await dlq('list', '--json')).stdout) as { messages: { messageId: string }[] }).messages.map((r) => r.messageId).sort();

describe('edit and resubmit on the local stack', () => {
  it('sends a corrected body under <key>~edit-1 recording the original, applied once; refuses an invalid edit and one whose original is applied', async () => {
    await eventually('both payments dead-lettered', async () => (await listed()).join() === 'pay-applied,pay-wrong', 30_000);
    expect((await order())?.amountPaid).toBe(3);
    const dir = await mkdtemp(join(tmpdir(), 'edit-'));
    const fixed = join(dir, 'fixed.json');
    await writeFile(fixed, JSON.stringify({ ...wrong, currency: 'EUR' }));
    const invalid = join(dir, 'invalid.json');
    await writeFile(invalid, JSON.stringify({ ...wrong, amount: 'twelve' }));

    expect(await dlq('resubmit', 'pay-wrong', '--body-file', invalid)).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('refused  the edited body is not a valid message'),
    });
    expect(await dlq('resubmit', 'pay-applied', '--body-file', fixed)).toMatchObject({
      code: 1,
      stdout: expect.stringContaining("refused  the original's key already has an effect (processed: payment applied at"),
    });

    const sent = await dlq('resubmit', 'pay-wrong', '--body-file', fixed);
    expect(sent).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('pay-wrong -> pay-wrong~edit-1  resubmitted  sent as pay-wrong~edit-1, edited from pay-wrong'),
    });
    await eventually('the corrected payment applied', async () => (await order())?.amountPaid === 15, 30_000);
    expect(await listed()).toEqual(['pay-applied']);

    const traced = JSON.parse((await dlq('trace', 'ed-1', '--json')).stdout) as { events: { where: string; id: string; detail: string }[] };
    expect(traced.events.find((e) => e.where === 'cosmos inbox' && e.id.includes('pay-wrong~edit-1'))).toBeDefined();
    const audit = JSON.parse((await dlq('audit', '--json')).stdout) as {
      command: string;
      targets: string[];
      options: Record<string, unknown>;
      exitCode: number;
    }[];
    expect(audit.filter((a) => a.exitCode === 0)).toEqual([
      expect.objectContaining({ command: 'resubmit', targets: ['pay-wrong'], options: expect.objectContaining({ bodyFile: fixed }) }),
    ]);
  }, 120_000);
});
