import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../dev/host/functionsCore.js';
import { startLocalFunctionsHost } from '../../dev/host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../dev/host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runbookDemoRetrySettings, seedRunbookScenario } from '../../dev/local/runbookDemo.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { eventually } from '../support/waiting.js';

// The runbook in docs/operations.md, followed step by step against `npm run local -- --serve --runbook-demo`.
let stack: LocalStack;
let host: LocalFunctionsHost;

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings, runbookDemoRetrySettings, { DELAYED_RETRY_ENABLED: 'true' });
  await import('../../functions/processOrder.js');
  const functions = registeredFunctions().filter((f) => f.metadata.name === 'processOrder').slice(-1);
  host = startLocalFunctionsHost(functions, { settings: stack.settings, host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true } });
}, 60_000);
afterAll(async () => {
  await host.close();
  await stack.close();
});

async function dlq(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const env = { SERVICEBUS_CONNECTION_STRING: stack.settings.ServiceBusConnection, COSMOS_ENDPOINT: stack.settings.COSMOS_ENDPOINT, COSMOS_KEY: stack.settings.COSMOS_KEY };
  const code = await runDlqCli(args, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('the dead-letter runbook on the local stack', () => {
  it('lists a conflict and a payment that outlasted its retry budget, resubmits the payment once, leaves the conflict', async () => {
    const lines: string[] = [];
    await seedRunbookScenario(stack, (line) => lines.push(line));
    expect(lines.join('\n')).toContain('RUNBOOK DEMO READY');

    const listing = await dlq('list', '--json');
    expect(listing.stderr).toBe('');
    const listed = JSON.parse(listing.stdout) as { messageId: string; store: { kind: string; detail: string } }[];
    const byId = (prefix: string) => listed.find((r) => r.messageId.startsWith(prefix));
    expect(listed).toHaveLength(2);
    expect(byId('runbook-conflict')?.store.kind).toBe('conflict');
    expect(byId('runbook-payment')?.store).toEqual({ kind: 'not-processed', detail: 'payment not applied' });

    const shown = JSON.parse((await dlq('show', 'runbook-payment')).stdout) as { applicationProperties: Record<string, unknown>; stored: { rejection: { reason: string } } };
    expect(shown.stored.rejection.reason).toBe('RetryBudgetExhausted');
    expect(shown.applicationProperties['retry-of']).toBe('runbook-payment');

    expect((await dlq('resubmit', 'runbook-payment')).code).toBe(0);
    const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
    const order = cosmos.database('orders').container('orders').item('runbook-order-2', 'runbook-order-2');
    await eventually('the payment applied', async () => ((await order.read()).resource as { amountPaid?: number } | undefined)?.amountPaid === 39, 30_000);
    cosmos.dispose();

    const after = JSON.parse((await dlq('list', '--json')).stdout) as { messageId: string }[];
    expect(after.map((r) => r.messageId)).toEqual(['runbook-conflict']);
    expect((await dlq('purge', 'runbook-conflict', '--yes')).code).toBe(0);
    expect(JSON.parse((await dlq('list', '--json')).stdout)).toEqual([]);
  }, 240_000);
});
