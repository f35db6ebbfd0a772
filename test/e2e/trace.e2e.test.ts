import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import type { TraceReport } from '../../src/cli/traceCommand.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { runOperatorTool } from '../support/operatorTool.js';
import { eventually } from '../support/waiting.js';

// `trace` on the local stack: one order's story across the store, the broker and the operator log.
let stack: LocalStack;
let host: LocalFunctionsHost | undefined;
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings);
  const client = new ServiceBusClient(stack.serviceBus.connectionString);
  const sender = client.createSender('orders');
  // One message of the order dead-lettered before any consumer runs, carrying the trace it came with.
  await sender.sendMessages({
    messageId: 'tr-1-pay-late',
    subject: 'PaymentReceived',
    body: paymentReceived('tr-1'),
    applicationProperties: { 'Diagnostic-Id': `00-${traceId}-00f067aa0ba902b7-01` },
  });
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
  await sender.sendMessages({ messageId: 'tr-1-placed', subject: 'OrderPlaced', body: orderPlaced('tr-1') });
  await sender.sendMessages({ messageId: 'tr-1-pay', subject: 'PaymentReceived', body: paymentReceived('tr-1', { amount: 5 }) });
  await sender.close();
  await client.close();
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const order = cosmos.database('orders').container('orders').item('tr-1', 'tr-1');
  await eventually('the order and its payment', async () => ((await order.read()).resource as { amountPaid?: number } | undefined)?.amountPaid === 5, 30_000);
  cosmos.dispose();
}, 90_000);
afterAll(async () => {
  await host?.close();
  await stack.close();
});

const dlq = (...args: string[]) => runOperatorTool(stack, args);

describe('trace on the local stack', () => {
  it("tells one order's story in time order: stored records, the dead-lettered message, the operator's action, and the trace id", async () => {
    await dlq('--operator', 'ops-on-call', 'shipments', 'resolve', 'tr-1', '--retry');
    const traced = await dlq('trace', 'tr-1', '--json');
    expect(traced).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(traced.stdout) as TraceReport;
    // The dead-lettered message's Diagnostic-Id, and the invocation's trace the outbox entry stored.
    expect(report).toMatchObject({ input: 'tr-1', orderId: 'tr-1', traceIds: expect.arrayContaining([traceId]) });
    expect(report.traceIds.length).toBeGreaterThan(1);
    const wheres = new Set(report.events.map((e) => e.where));
    for (const where of ['cosmos order', 'cosmos inbox', 'orders/$deadletterqueue', 'operator-action']) expect(wheres).toContain(where);
    expect(report.events.find((e) => e.where === 'orders/$deadletterqueue')).toMatchObject({
      what: 'dead-lettered message',
      id: 'tr-1-pay-late',
      detail: expect.stringContaining('ConsumerBug'),
    });
    expect(report.events.find((e) => e.where === 'operator-action')).toMatchObject({ what: 'operator ran shipments resolve' });
    const times = report.events.map((e) => e.at);
    expect(times).toEqual([...times].sort());

    // By a message's key it finds the same order, through the message's body.
    expect((JSON.parse((await dlq('trace', 'tr-1-pay-late', '--json')).stdout) as TraceReport).orderId).toBe('tr-1');
    const text = await dlq('trace', 'tr-1');
    expect(text.stdout).toContain(`Application Insights: operation_Id == "${traceId}"`);
    expect(await dlq('trace', 'no-such-order')).toMatchObject({ code: 1, stdout: expect.stringContaining('0 event(s)') });
  }, 120_000);
});
