import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import type { FailureGroup } from '../../src/cli/failureGroups.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { orderPlaced } from '../support/orderMessages.js';
import { runOperatorTool } from '../support/operatorTool.js';
import { eventually } from '../support/waiting.js';

// A grouped bulk retry on the local stack: dead-lettered messages grouped, a group retried, oldest first, up to --max.
let stack: LocalStack;
let host: LocalFunctionsHost | undefined;

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings);
  // Dead-lettered by hand before any consumer runs: three OrderPlaced for one reason, one for another.
  const client = new ServiceBusClient(stack.serviceBus.connectionString);
  const sender = client.createSender('orders');
  for (const id of ['grp-1', 'grp-2', 'grp-3', 'grp-4'])
    await sender.sendMessages({ messageId: id, subject: 'OrderPlaced', contentType: 'application/json', body: orderPlaced(id) });
  const receiver = client.createReceiver('orders');
  let left = 4;
  while (left > 0) {
    for (const m of await receiver.receiveMessages(4, { maxWaitTimeInMs: 2000 })) {
      await receiver.deadLetterMessage(m, {
        deadLetterReason: m.messageId === 'grp-4' ? 'Other' : 'ConsumerBug',
        deadLetterErrorDescription: 'a bug fixed since',
      });
      left -= 1;
    }
  }
  await client.close();
  await import('../../functions/processOrder.js');
  const processOrder = [...registeredFunctions()].reverse().find((f) => f.metadata.name === 'processOrder')!;
  host = startLocalFunctionsHost([processOrder], {
    settings: stack.settings,
    host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
  });
}, 60_000);
afterAll(async () => {
  await host?.close();
  await stack.close();
});

const dlq = (...args: string[]) => runOperatorTool(stack, args);

const orderExists = async (orderId: string) => {
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  try {
    return (await cosmos.database('orders').container('orders').item(orderId, orderId).read()).resource !== undefined;
  } finally {
    cosmos.dispose();
  }
};

describe('failure groups on the local stack', () => {
  it('groups dead letters by entity, reason and type, and retries one group oldest first, up to --max, only with --yes', async () => {
    const listed = await dlq('groups', '--json');
    expect(listed.stderr).toBe('');
    const { groups } = JSON.parse(listed.stdout) as { groups: FailureGroup[] };
    expect(groups.map((g) => [g.entity, g.reason, g.messageType, g.count])).toEqual([
      ['orders/$deadletterqueue', 'ConsumerBug', 'OrderPlaced', 3],
      ['orders/$deadletterqueue', 'Other', 'OrderPlaced', 1],
    ]);
    const id = groups[0]!.id;
    expect((await dlq('groups')).stdout).toMatch(new RegExp(`${id}\\s+orders/\\$deadletterqueue\\s+ConsumerBug\\s+OrderPlaced\\s+3`));

    const plan = await dlq('groups', 'retry', id, '--max', '2');
    expect(plan).toMatchObject({ code: 0, stdout: expect.stringContaining('dry run (--yes to act): would-resubmit 2') });
    expect(plan.stdout).toMatch(/grp-1[^\n]*would-resubmit[\s\S]*grp-2[^\n]*would-resubmit/);
    expect(await orderExists('grp-1')).toBe(false);

    expect(await dlq('groups', 'retry', id, '--max', '2', '--yes')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('groups retry: this command cannot be undone'),
    });
    const done = await dlq('groups', 'retry', id, '--max', '2', '--yes', '--why', 'consumer fixed in 1.4.2');
    expect(done).toMatchObject({ code: 0, stdout: expect.stringContaining('resubmitted 2') });
    await eventually('the two oldest orders stored', async () => (await orderExists('grp-1')) && (await orderExists('grp-2')), 30_000);
    expect(await orderExists('grp-3')).toBe(false);

    const after = JSON.parse((await dlq('groups', '--json')).stdout) as { groups: FailureGroup[] };
    expect(after.groups.map((g) => [g.reason, g.count])).toEqual([
      ['ConsumerBug', 1],
      ['Other', 1],
    ]);
    const audit = JSON.parse((await dlq('audit', '--json')).stdout) as {
      command: string;
      targets: string[];
      options: Record<string, unknown>;
      why: string;
      exitCode: number;
    }[];
    expect(audit).toEqual([
      expect.objectContaining({
        command: 'groups retry',
        targets: [id],
        why: 'consumer fixed in 1.4.2',
        exitCode: 0,
        options: expect.objectContaining({ max: 2, yes: true }),
      }),
    ]);
  }, 120_000);
});
