import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import Long from 'long';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runbookDemoSettings, seedRunbookScenario } from '../../dev/local/runbookDemo.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import type { OrderDocument } from '../../src/orders/index.js';
import { runOperatorTool } from '../support/operatorTool.js';
import type { ToolRun } from '../support/operatorTool.js';
import { eventually } from '../support/waiting.js';

// The runbook in docs/operations.md ("Runbook, step by step, on the local stack"), its commands read
// from the page and run in its order against `npm run local -- --serve --runbook-demo`'s scenario.
let stack: LocalStack;
let host: LocalFunctionsHost;
let cosmos: CosmosClient;
let container: Container;
let serviceBus: ServiceBusClient;

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  const settings = { ...stack.settings, ...runbookDemoSettings };
  Object.assign(process.env, settings);
  await import('../../functions/processOrder.js');
  await import('../../functions/sweepParkedItems.js');
  await import('../../functions/publishOutbox.js');
  // No requestShipment: the copies resubmitted to fulfilment and audit stay there, where the test finds them.
  const functions = ['processOrder', 'sweepParkedItems', 'publishOutbox'].map(
    (name) => [...registeredFunctions()].reverse().find((f) => f.metadata.name === name) as RegisteredFunction,
  );
  host = startLocalFunctionsHost(functions, {
    settings,
    host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    cosmos: { intervals: { feedPollDelayMs: 100, leaseAcquireIntervalMs: 200, leaseRenewIntervalMs: 300, leaseExpirationIntervalMs: 1500 } },
  });
  await host.cosmosTriggers;
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database('orders').container('orders');
  serviceBus = new ServiceBusClient(stack.serviceBus.connectionString);
}, 60_000);
afterAll(async () => {
  await serviceBus.close();
  cosmos.dispose();
  await host.close();
  await stack.close();
});

/** The `npm run ops -- ...` lines of the runbook section, each split as a shell would (quotes kept together), comments dropped. */
function runbookCommands(markdown: string): string[][] {
  const section = markdown.slice(markdown.indexOf('## Runbook, step by step, on the local stack'), markdown.indexOf('## Troubleshooting'));
  return section
    .split('\n')
    .filter((line) => /^npm run (ops|dlq) -- /.test(line))
    .map((line) => shellWords(line.replace(/^npm run (ops|dlq) -- /, '')));
}

function shellWords(text: string): string[] {
  const words: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|'([^']*)'|(#.*$)|(\S+)/g)) {
    if (m[3] !== undefined) break;
    words.push(m[1] ?? m[2] ?? m[4] ?? '');
  }
  return words;
}

const orderOf = async (orderId: string) => (await container.item(orderId, orderId).read<OrderDocument>()).resource;
const json = <T>(run: ToolRun) => JSON.parse(run.stdout) as T;
const tool = (...args: string[]) => runOperatorTool(stack, args);
async function peek(topic: string, subscription: string): Promise<{ messageId: string; to?: string; sessionId?: string }[]> {
  const receiver = serviceBus.createReceiver(topic, subscription);
  const seen = await receiver.peekMessages(100, { fromSequenceNumber: Long.fromNumber(0) });
  await receiver.close();
  return seen.map((m) => ({ messageId: String(m.messageId), to: m.to, sessionId: m.sessionId }));
}

/** What each command of the runbook must show or do, in the runbook's order: the comment beside it, checked. */
const steps: [string, (run: ToolRun) => Promise<void>][] = [
  [
    'list',
    async (run) => {
      expect(run.stdout).toMatch(/runbook-conflict .*conflict: /);
      expect(run.stdout).toMatch(/runbook-retry .*not-processed/);
    },
  ],
  [
    'show runbook-conflict',
    async (run) => {
      const shown = json<{ deadLetterReason: string; stored: { differences: { path: string }[] } }>(run);
      expect(shown.deadLetterReason).toBe('MaxDeliveryCountExceeded');
      expect(shown.stored.differences.map((d) => d.path)).toContain('customerId');
    },
  ],
  [
    'purge runbook-conflict --yes --why client sent two bodies under one key',
    async (run) => {
      expect(run.stdout).toContain('purged 1');
      expect(json<{ messages: { messageId: string }[] }>(await tool('list', '--json')).messages.map((r) => r.messageId)).toEqual(['runbook-retry']);
    },
  ],
  [
    'parked list',
    async (run) => {
      expect(run.stdout).toMatch(/runbook-order-2 .*runbook-payment .*rejected .*OrderNeverArrived/);
    },
  ],
  [
    'parked resubmit runbook-payment',
    async (run) => {
      expect(run.stdout).toContain('resubmitted 1');
      await eventually('the payment applied once', async () => (await orderOf('runbook-order-2'))?.amountPaid === 39, 30_000);
    },
  ],
  [
    'parked list',
    async (run) => {
      expect(run.stdout).toContain('0 parked item(s)');
    },
  ],
  [
    'outbox list',
    async (run) => {
      expect(run.stdout).toMatch(/runbook-order-3 .*OrderPlaced .*orders .*failed .*MessagingEntityNotFound/);
    },
  ],
  [
    'outbox requeue --all',
    async (run) => {
      expect(run.stdout).toContain('dry run (--yes to act): would-requeue 1');
      expect(json<{ entries: unknown[] }>(await tool('outbox', 'list', '--json')).entries).toHaveLength(1);
    },
  ],
  [
    'outbox requeue --all --yes --why the orders queue is deployed',
    async (run) => {
      expect(run.stdout).toContain('requeued 1');
      await eventually('runbook-order-3 stored', async () => (await orderOf('runbook-order-3')) !== undefined, 30_000);
    },
  ],
  [
    'outbox list',
    async (run) => {
      expect(run.stdout).toContain('0 outbox entry(ies)');
    },
  ],
  [
    'shipments list',
    async (run) => {
      expect(run.stdout).toMatch(/runbook-order-1 .*escalated .*the carrier gave no answer/);
    },
  ],
  [
    'shipments resolve runbook-order-1 --shipment-id SHP-RUNBOOK --dry-run',
    async (run) => {
      expect(run.stdout).toContain('would-record');
      expect((await orderOf('runbook-order-1'))?.shipmentId).toBeUndefined();
    },
  ],
  [
    'shipments resolve runbook-order-1 --shipment-id SHP-RUNBOOK --why found at the carrier by its reference',
    async (run) => {
      expect(run.stdout).toContain('recorded');
      expect((await orderOf('runbook-order-1'))?.shipmentId).toBe('SHP-RUNBOOK');
    },
  ],
  [
    'shipments list',
    async (run) => {
      expect(run.stdout).toContain('0 shipment record(s)');
    },
  ],
  [
    'groups',
    async (run) => {
      expect(run.stdout).toMatch(/orders\/\$deadletterqueue\s+MaxDeliveryCountExceeded\s+OrderPlaced\s+1/);
      expect(run.stdout).toMatch(/order-events\/subscriptions\/fulfilment\/\$deadletterqueue\s+MaxDeliveryCountExceeded\s+OrderAccepted\s+1/);
      expect(run.stdout).toMatch(/order-events\/subscriptions\/audit\/\$deadletterqueue\s+MaxDeliveryCountExceeded\s+OrderAccepted\s+1/);
      expect(run.stdout).toContain('3 group(s), 3 failure(s)');
    },
  ],
  [
    'resubmit runbook-retry',
    async (run) => {
      expect(run.stdout).toContain('resubmitted 1');
      await eventually('runbook-order-4 stored', async () => (await orderOf('runbook-order-4')) !== undefined, 30_000);
    },
  ],
  [
    '--topic order-events --subscription fulfilment resubmit runbook-fulfilment',
    async (run) => {
      expect(run.stdout).toMatch(/taken by rule retries of fulfilment/);
      expect(await peek('order-events', 'fulfilment')).toContainEqual(
        expect.objectContaining({ messageId: expect.stringMatching(/^runbook-fulfilment~resubmit-1-[0-9a-f]{12}$/), to: 'fulfilment' }),
      );
    },
  ],
  [
    '--topic order-events --subscription audit resubmit runbook-audit',
    async (run) => {
      expect(run.stdout).toMatch(/taken by rule events of audit/);
      const sessionId = 'runbook-order-2';
      const receiver = await serviceBus.acceptSession('order-events', 'audit', sessionId);
      const copies = await receiver.peekMessages(100, { fromSequenceNumber: Long.fromNumber(0) });
      await receiver.close();
      expect(copies.map((m) => String(m.messageId))).toContainEqual(expect.stringMatching(/^runbook-audit~resubmit-1-[0-9a-f]{12}$/));
    },
  ],
  [
    'groups',
    async (run) => {
      expect(run.stdout).toContain('0 group(s), 0 failure(s)');
    },
  ],
  [
    'audit',
    async (run) => {
      for (const command of ['purge', 'parked resubmit', 'outbox requeue', 'shipments resolve', 'resubmit'])
        expect(run.stdout).toMatch(new RegExp(`\\s${command}\\s+exit 0`));
    },
  ],
  [
    'trace runbook-order-1',
    async (run) => {
      for (const line of [
        /cosmos order\s+order written/,
        /cosmos conflict\s+conflict written/,
        /cosmos shipment\s+shipment written .*shipmentId SHP-RUNBOOK/,
        /operator-action\s+operator ran shipments/,
        /Application Insights: operation_Id == "[0-9a-f]{32}"/,
      ]) {
        expect(run.stdout).toMatch(line);
      }
    },
  ],
  [
    'trace runbook-order-2',
    async (run) => {
      for (const line of [
        /cosmos parked\s+parked rejected/,
        /cosmos inbox\s+inbox written .*runbook-payment~resubmit-1/,
        /cosmos outbox\s+outbox published/,
        /fulfil…\s+message waiting\s+runbook-fulfilment~resubmit-1/,
      ]) {
        expect(run.stdout).toMatch(line);
      }
    },
  ],
];

describe('the runbook on the local stack', () => {
  it('lists exactly the commands this test follows, in the same order', () => {
    expect(runbookCommands(readFileSync('docs/operations.md', 'utf8')).map((argv) => argv.join(' '))).toEqual(steps.map(([command]) => command));
  });

  it('each scenario, followed command by command: a conflict, a parked item never matched, a failed outbox entry, an escalated shipment, a resubmit from each entity, the story of an order', async () => {
    const lines: string[] = [];
    await seedRunbookScenario(stack, (line) => lines.push(line));
    expect(lines.join('\n')).toContain('RUNBOOK DEMO READY');
    const exportDir = await mkdtemp(join(tmpdir(), 'runbook-'));
    const commands = runbookCommands(readFileSync('docs/operations.md', 'utf8'));
    for (const [index, argv] of commands.entries()) {
      const [, check] = steps[index] as (typeof steps)[number];
      // Purged messages go to a file in the working directory by default: here, a temporary one.
      const args = argv.includes('purge') && !argv.includes('--export') ? [...argv, '--export', join(exportDir, `purge-${index}.jsonl`)] : argv;
      const run = await tool(...args);
      expect(run.code, `${argv.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
      await check(run);
    }
  }, 300_000);
});
