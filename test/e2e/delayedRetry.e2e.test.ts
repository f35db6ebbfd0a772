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

// A Cosmos DB outage longer than a queue's whole delivery budget: with only immediate redeliveries
// (3 here) every payment would be dead-lettered with its effect missing. The retry layers keep
// them: in-invocation retries, then copies scheduled on the queue through the function's own
// connection, applied exactly once when the outage is over.
let cosmos: CosmosClient;
let container: Container;
let emulator: ServiceBusEmulator;
let producer: ServiceBusClient;
let host: LocalFunctionsHost;
let processOrder: RegisteredFunction;
const outcomes: { messageId?: string; outcome: string }[] = [];

beforeAll(async () => {
  emulator = await startServiceBusEmulator({ port: 0, queues: { 'orders-retry': testQueue({ maxDeliveryCount: 3, lockDurationMs: 5_000 }) } });
  Object.assign(process.env, {
    ServiceBusConnection: emulator.connectionString,
    ORDERS_QUEUE_NAME: 'orders-retry',
    TRANSIENT_RETRY_IN_INVOCATION_MS: '300',
    DELAYED_RETRY_ENABLED: 'true',
    DELAYED_RETRY_FIRST_DELAY_SECONDS: '1',
    DELAYED_RETRY_MAX_DELAY_SECONDS: '2',
  });
  cosmos = testCosmosClient();
  container = await createOrdersContainer(cosmos);
  processOrder = await loadProcessOrder(container);
  producer = new ServiceBusClient(emulator.connectionString);
  host = startLocalFunctionsHost([processOrder], {
    settings: { ServiceBusConnection: emulator.connectionString, ORDERS_QUEUE_NAME: 'orders-retry' },
    host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    // A copy's MessageId is keyed (unpredictable): the message it descends from is its retry-of.
    onInvocation: (_fn, delivery, result) =>
      outcomes.push({ messageId: String(delivery.applicationProperties?.['retry-of'] ?? delivery.messageId), outcome: String(outcomeLine(result).outcome) }),
  });
});
afterAll(async () => {
  await host.close();
  await producer.close();
  await emulator.close();
  cosmos.dispose();
});

/** Undefined while the outage also answers this test's own reads. */
async function amountPaid(orderId: string): Promise<number | undefined> {
  const read = await container
    .item(orderId, orderId)
    .read()
    .catch(() => undefined);
  return (read?.resource as { amountPaid?: number } | undefined)?.amountPaid;
}

describe('a Cosmos DB outage longer than the delivery budget', () => {
  it('loses nothing: each payment is rescheduled while it lasts and applied once after, and nothing is dead-lettered', async () => {
    const orderId = newOrderId();
    const sender = producer.createSender('orders-retry');
    await sender.sendMessages({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' });
    await eventually('the order', async () => (await amountPaid(orderId)) === 0);

    await injectCosmosFault({ statusCode: 503, times: 1_000_000, forMs: 5_000, urlIncludes: container.id });
    const payments = [1, 2, 3].map((n) => ({
      body: paymentReceived(orderId, { paymentId: `p-${n}`, amount: n }),
      messageId: `p-${orderId}-${n}`,
      subject: 'PaymentReceived',
    }));
    await sender.sendMessages(payments);

    await eventually('every payment applied after the outage', async () => (await amountPaid(orderId)) === 6, 30_000);
    const of = (n: number) => outcomes.filter((o) => o.messageId?.startsWith(`p-${orderId}-${n}`)).map((o) => o.outcome);
    for (const n of [1, 2, 3]) {
      expect(of(n).filter((o) => o === 'rescheduled').length, `payment ${n}: ${of(n).join(', ')}`).toBeGreaterThanOrEqual(2);
      expect(of(n).filter((o) => o === 'created')).toHaveLength(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await amountPaid(orderId)).toBe(6);
    expect(emulator.entity('orders-retry/$DeadLetterQueue')?.messages.size ?? 0).toBe(0);
    expect(emulator.entity('orders-retry')?.messages.size ?? 0).toBe(0);
  }, 60_000);
});
