import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { InvocationResult } from '../../emulators/functions-host/hostInvocation.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import type { OrderDocument } from '../../src/orders/index.js';
import { newOrderId, orderPlaced, orderStatusChanged, paymentReceived } from '../support/orderMessages.js';
import { eventually } from '../support/waiting.js';

// Early arrivals through the whole chain: the real queue, both functions in the local host (the
// sweeper on its timer), Cosmos, and the operator's `dlq parked` commands.
let stack: LocalStack;
let host: LocalFunctionsHost;
let producer: ServiceBusClient;
let cosmos: CosmosClient;
let container: Container;
const sweeps: InvocationResult[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  // A sweep every second, and a horizon of five seconds, so an order that never comes is seen to.
  const settings: Record<string, string> = {
    ...stack.settings,
    PARKED_SWEEP_SCHEDULE: '*/1 * * * * *',
    PARKED_ITEM_HORIZON_SECONDS: '5',
    PARKED_SWEEP_MIN_AGE_SECONDS: '0',
  };
  Object.assign(process.env, settings);
  await import('../../functions/processOrder.js');
  await import('../../functions/sweepParkedItems.js');
  const functions = ['processOrder', 'sweepParkedItems'].map((name) => [...registeredFunctions()].reverse().find((f) => f.metadata.name === name)!);
  host = startLocalFunctionsHost(functions, {
    settings,
    host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    onTimerInvocation: (_fn, result) => sweeps.push(result),
  });
  producer = new ServiceBusClient(stack.serviceBus.connectionString);
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database(settings.COSMOS_DATABASE ?? 'orders').container(settings.COSMOS_ORDERS_CONTAINER ?? 'orders');
}, 60_000);

afterAll(async () => {
  await host.close();
  await producer.close();
  cosmos.dispose();
  await stack.close();
});

async function send(subject: string, messageId: string, body: unknown) {
  const sender = producer.createSender('orders');
  await sender.sendMessages({ body, subject, messageId, contentType: 'application/json' });
  await sender.close();
}

async function dlq(...args: string[]) {
  return dlqAt(undefined, ...args);
}

/** The tool with its clock moved to `nowMs`, and `extraEnv` beside the stack's settings. */
async function dlqAt(nowMs: number | undefined, ...args: string[]) {
  return dlqWith({}, nowMs, ...args);
}

async function dlqWith(extraEnv: Record<string, string>, nowMs: number | undefined, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const env = {
    SERVICEBUS_CONNECTION_STRING: stack.settings.ServiceBusConnection,
    COSMOS_ENDPOINT: stack.settings.COSMOS_ENDPOINT,
    COSMOS_KEY: stack.settings.COSMOS_KEY,
    COSMOS_ORDERS_CONTAINER: stack.settings.COSMOS_ORDERS_CONTAINER,
    COSMOS_DATABASE: stack.settings.COSMOS_DATABASE,
    ...extraEnv,
  };
  const code = await runDlqCli(args, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env, ...(nowMs === undefined ? {} : { now: () => nowMs }) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const orderOf = async (orderId: string) => (await container.item(orderId, orderId).read<OrderDocument>()).resource;

describe('early arrivals on the local stack', () => {
  it('applies a payment and a status change that came before their order, with nothing dead-lettered', async () => {
    const orderId = newOrderId();
    await send('PaymentReceived', `pay-${orderId}`, paymentReceived(orderId, { amount: 4 }));
    await send('OrderStatusChanged', `st-${orderId}`, orderStatusChanged(orderId, 2, 'Shipped'));
    await eventually(
      'both parked',
      async () =>
        (await container.items.query({ query: "SELECT * FROM c WHERE c.docType = 'parked'" }, { partitionKey: orderId }).fetchAll()).resources.length === 2,
    );
    await send('OrderPlaced', `m-${orderId}`, orderPlaced(orderId));
    await eventually('the order with both applied', async () => (await orderOf(orderId))?.amountPaid === 4);
    expect(await orderOf(orderId)).toMatchObject({ amountPaid: 4, paymentCount: 1, status: 'Shipped', statusVersion: 2 });
    expect(JSON.parse((await dlq('list', '--json')).stdout)).toEqual({ messages: [], truncated: [] });
  });

  it('rejects an item whose order never came as OrderNeverArrived on the timer, lists it, and resubmits it once its order is there', async () => {
    const orderId = newOrderId();
    await send('PaymentReceived', `late-${orderId}`, paymentReceived(orderId, { amount: 6 }));
    await eventually(
      'the sweeper rejects it',
      async () => {
        const listed = (JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: { reason?: string }[] }).items;
        return listed.some((r) => r.reason === 'OrderNeverArrived');
      },
      20_000,
    );
    expect(
      sweeps.some((s) => s.logs.some((l) => l.level === 'error' && l.message.includes('"reason":"OrderNeverArrived"') && l.message.includes(orderId))),
    ).toBe(true);
    const table = await dlq('parked', 'list', '--order', orderId);
    expect(table.stdout).toMatch(/PaymentReceived\s+late-.*rejected\s+OrderNeverArrived/);

    await send('OrderPlaced', `m-${orderId}`, orderPlaced(orderId));
    await eventually('the order stored', async () => (await orderOf(orderId)) !== undefined);
    // Rejected items are an operator's decision: the order's arrival does not apply them by itself.
    expect((await orderOf(orderId))?.amountPaid).toBe(0);

    const dry = await dlq('parked', 'resubmit', `late-${orderId}`, '--dry-run');
    expect(dry.stdout).toMatch(/would-resubmit .*markers kept until .* checked: first enqueued .*the earliest of: parked at/);
    // A month on, another copy's marker may be gone: refused, naming the item, its age and the setting; the item stays.
    const monthLater = Date.now() + 31 * 24 * 3600 * 1000;
    const late = await dlqAt(monthLater, 'parked', 'resubmit', `late-${orderId}`);
    expect(late.code).toBe(1);
    expect(late.stdout).toMatch(
      new RegExp(`refused  parked item ${orderId}/.*\\(31 d 0 h ago; the earliest of: parked at\\); INBOX_MARKER_TTL_SECONDS 2592000 s`),
    );
    expect((JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: unknown[] }).items).toHaveLength(1);
    const resubmit = await dlq('parked', 'resubmit', `late-${orderId}`);
    expect(resubmit).toMatchObject({ code: 0, stderr: '' });
    expect(resubmit.stdout).toMatch(new RegExp(`-> late-${orderId}~resubmit-1-[0-9a-f]{12}  resubmitted`));
    await eventually('the payment applied', async () => (await orderOf(orderId))?.amountPaid === 6);
    expect((JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: unknown[] }).items).toEqual([]);
    // Nothing is left to resubmit; naming it again says so.
    expect(await dlq('parked', 'resubmit', `late-${orderId}`)).toMatchObject({ code: 1, stdout: expect.stringContaining('1 named item(s) not found') });
    expect((await orderOf(orderId))?.paymentCount).toBe(1);
  });

  it('discards a rejected item only with --yes (or a confirmation for one named item), and then lists it no more', async () => {
    const orderId = newOrderId();
    await send('PaymentReceived', `drop-${orderId}`, paymentReceived(orderId));
    await eventually(
      'rejected',
      async () => (JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: unknown[] }).items.length === 1,
      20_000,
    );
    expect(await dlq('parked', 'discard', '--order', orderId, '--yes')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('parked discard: this command cannot be undone'),
    });
    // One named item asks first; a bulk run (--order) only shows its plan without --yes.
    expect(await dlq('parked', 'discard', `drop-${orderId}`, '--why', 'cancelled')).toMatchObject({
      code: 2,
      stderr: 'error: refusing to discard 1 parked item(s) without --yes (no terminal to ask)',
    });
    expect(await dlq('parked', 'discard', '--order', orderId, '--why', 'cancelled')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('dry run (--yes to act): would-discard 1'),
    });
    expect((JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: unknown[] }).items).toHaveLength(1);
    // The discarded item is kept INBOX_MARKER_TTL_SECONDS as evidence: a value the app would refuse (not a number,
    // out of bounds) is refused here too, before anything is written, naming the setting. (Blank is the app's
    // "not set": the default.)
    for (const ttl of ['soon', '0', '-1', '2147483648'])
      expect(await dlqWith({ INBOX_MARKER_TTL_SECONDS: ttl }, undefined, 'parked', 'discard', '--order', orderId, '--yes', '--why', 'cancelled')).toMatchObject(
        {
          code: 2,
          stderr: expect.stringContaining('INBOX_MARKER_TTL_SECONDS'),
        },
      );
    expect((JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: unknown[] }).items).toHaveLength(1);
    expect(await dlq('parked', 'discard', '--order', orderId, '--yes', '--why', 'cancelled')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('discarded 1'),
    });
    expect((JSON.parse((await dlq('parked', 'list', '--order', orderId, '--json')).stdout) as { items: unknown[] }).items).toEqual([]);
    expect((JSON.parse((await dlq('parked', 'list', '--order', orderId, '--state', 'discarded', '--json')).stdout) as { items: unknown[] }).items).toHaveLength(
      1,
    );
  });

  it('says what it needs when Cosmos DB is not named', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runDlqCli(['parked', 'list'], { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {} });
    expect({ code, err }).toEqual({
      code: 2,
      err: ['error: parked items, outbox entries and shipment records live in Cosmos DB: give --cosmos-endpoint (or COSMOS_ENDPOINT)'],
    });
  });
});
