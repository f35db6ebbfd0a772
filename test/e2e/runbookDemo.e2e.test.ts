import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../dev/host/functionsCore.js';
import { startLocalFunctionsHost } from '../../dev/host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../dev/host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runbookDemoSettings, seedRunbookScenario } from '../../dev/local/runbookDemo.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { runOperatorTool } from '../support/operatorTool.js';
import { eventually } from '../support/waiting.js';

// The runbook in docs/operations.md, followed step by step against `npm run local -- --serve --runbook-demo`.
let stack: LocalStack;
let host: LocalFunctionsHost;

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings, runbookDemoSettings);
  await import('../../functions/processOrder.js');
  await import('../../functions/sweepParkedItems.js');
  const functions = ['processOrder', 'sweepParkedItems'].map((name) => [...registeredFunctions()].reverse().find((f) => f.metadata.name === name)!);
  host = startLocalFunctionsHost(functions, { settings: { ...stack.settings, ...runbookDemoSettings }, host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true } });
}, 60_000);
afterAll(async () => {
  await host.close();
  await stack.close();
});

const dlq = (...args: string[]) => runOperatorTool(stack, args);

describe('the dead-letter runbook on the local stack', () => {
  it('lists a conflict and a payment whose order never came, resubmits the payment once, leaves the conflict', async () => {
    const lines: string[] = [];
    await seedRunbookScenario(stack, (line) => lines.push(line));
    expect(lines.join('\n')).toContain('RUNBOOK DEMO READY');

    const listing = await dlq('list', '--json');
    expect(listing.stderr).toBe('');
    const listed = JSON.parse(listing.stdout) as { messageId: string; store: { kind: string; detail: string } }[];
    expect(listed.map((r) => [r.messageId, r.store.kind])).toEqual([['runbook-conflict', 'conflict']]);
    const shown = await dlq('show', 'runbook-conflict');
    expect(shown.stdout).toContain('customerId');

    const parked = JSON.parse((await dlq('parked', 'list', '--json')).stdout) as { messageId: string; reason: string; orderId: string }[];
    expect(parked).toEqual([expect.objectContaining({ messageId: 'runbook-payment', reason: 'OrderNeverArrived', orderId: 'runbook-order-2' })]);

    expect((await dlq('parked', 'resubmit', 'runbook-payment')).code).toBe(0);
    const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
    const order = cosmos.database('orders').container('orders').item('runbook-order-2', 'runbook-order-2');
    await eventually('the payment applied', async () => ((await order.read()).resource as { amountPaid?: number } | undefined)?.amountPaid === 39, 30_000);
    cosmos.dispose();
    expect(JSON.parse((await dlq('parked', 'list', '--json')).stdout)).toEqual([]);

    expect((await dlq('purge', 'runbook-conflict', '--yes', '--why', 'the client sent two bodies under one key', '--export', join(await mkdtemp(join(tmpdir(), 'runbook-')), 'conflict.jsonl'))).code).toBe(0);
    expect(JSON.parse((await dlq('list', '--json')).stdout)).toEqual([]);
  }, 240_000);
});
