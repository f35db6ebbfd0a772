import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { injectCosmosFault } from '../support/cosmosFaults.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { loadProcessOrder, outcomeLine } from '../support/processOrderHarness.js';
import { eventually, testQueue } from '../support/waiting.js';

// Two attacks by a sender with nothing but Send rights on the delayed-retry properties, through the
// emulator with duplicate detection on. The retry settings are shortened (a 6 s budget, delays of
// 1-2 s) so a budget is spent in seconds; the store's failure is one order's point reads failing.
let cosmos: CosmosClient;
let container: Container;
let emulator: ServiceBusEmulator;
let producer: ServiceBusClient;
let host: LocalFunctionsHost;
let processOrder: RegisteredFunction;
const queue = 'orders-forged';
const outcomes: { messageId?: string; outcome: string; reason?: string }[] = [];

beforeAll(async () => {
  emulator = await startServiceBusEmulator({ port: 0, queues: { [queue]: testQueue({ maxDeliveryCount: 10, lockDurationMs: 5_000 }) } });
  Object.assign(process.env, {
    ServiceBusConnection: emulator.connectionString,
    ORDERS_QUEUE_NAME: queue,
    TRANSIENT_RETRY_IN_INVOCATION_MS: '300',
    DELAYED_RETRY_ENABLED: 'true',
    DELAYED_RETRY_FIRST_DELAY_SECONDS: '1',
    DELAYED_RETRY_MAX_DELAY_SECONDS: '2',
    TRANSIENT_RETRY_BUDGET_SECONDS: '6',
  });
  cosmos = testCosmosClient();
  container = await createOrdersContainer(cosmos);
  processOrder = await loadProcessOrder(container);
  producer = new ServiceBusClient(emulator.connectionString);
  host = startLocalFunctionsHost([processOrder], {
    settings: { ServiceBusConnection: emulator.connectionString, ORDERS_QUEUE_NAME: queue },
    host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    onInvocation: (_fn, delivery, result) => {
      const line = outcomeLine(result);
      outcomes.push({ messageId: delivery.messageId, outcome: String(line.outcome), reason: typeof line.reason === 'string' ? line.reason : undefined });
    },
  });
});
afterAll(async () => {
  await host.close();
  await producer.close();
  await emulator.close();
  cosmos.dispose();
});

async function amountPaid(orderId: string): Promise<number | undefined> {
  const read = await container
    .item(orderId, orderId)
    .read()
    .catch(() => undefined);
  return (read?.resource as { amountPaid?: number } | undefined)?.amountPaid;
}

/** The store keeps failing for this one order: its point reads answer 503 for `forMs`. */
const failReadsOf = (orderId: string, forMs: number) =>
  injectCosmosFault({ statusCode: 503, times: 1_000_000, forMs, urlIncludes: `/docs/${orderId}`, method: 'GET' });

describe('a sender who forges the delayed-retry properties', () => {
  it('cannot extend a retry budget with a first-failure time a year ahead: the payment ends RetryBudgetExhausted within the budget', async () => {
    const orderId = newOrderId();
    const sender = producer.createSender(queue);
    await sender.sendMessages({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' });
    await eventually('the order', async () => (await amountPaid(orderId)) === 0);
    await failReadsOf(orderId, 120_000);
    const yearAhead = new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString();
    const messageId = `p-${orderId}`;
    await sender.sendMessages({
      body: paymentReceived(orderId, { paymentId: 'p-1', amount: 5 }),
      messageId,
      subject: 'PaymentReceived',
      applicationProperties: { 'retry-first-failure-at': yearAhead, 'retry-attempt': 1, 'retry-of': messageId },
    });
    const exhausted = () => outcomes.filter((o) => o.outcome === 'invalid' && o.reason?.includes('RetryBudgetExhausted'));
    // The budget is 6 s; 20 s leaves room for the last copy's delay and the machine's load, far below "for ever".
    await eventually('the payment rejected as RetryBudgetExhausted', () => exhausted().length > 0, 20_000);
    expect(outcomes.filter((o) => o.messageId === messageId || o.reason?.includes(messageId)).length).toBeGreaterThan(0);
    await sender.close();
  }, 40_000);

  it("cannot make the victim's retry copy be dropped by taking `<victim>~retry-1` first: the victim is applied once", async () => {
    const orderId = newOrderId();
    const sender = producer.createSender(queue);
    await sender.sendMessages({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' });
    await eventually('the order', async () => (await amountPaid(orderId)) === 0);
    const victim = `p-${orderId}`;
    // The attacker's message only has to take the MessageId; its body is refused and dead-lettered.
    await sender.sendMessages({ body: 'not json', messageId: `${victim}~retry-1`, subject: 'PaymentReceived' });
    await failReadsOf(orderId, 1_500);
    await sender.sendMessages({ body: paymentReceived(orderId, { paymentId: 'p-v', amount: 7 }), messageId: victim, subject: 'PaymentReceived' });
    await eventually('the victim payment applied after the failure', async () => (await amountPaid(orderId)) === 7, 20_000);
    const created = outcomes.filter(
      (o) => o.outcome === 'created' && (o.messageId === victim || o.reason === undefined) && o.messageId !== `${victim}~retry-1`,
    );
    expect(created.length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await amountPaid(orderId)).toBe(7);
    await sender.close();
  }, 40_000);
});
