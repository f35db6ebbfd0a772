import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { findOutcomeLine } from '../../dev/local/outcomeLine.js';
import { drainAll } from '../../dev/local/drainSubscription.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import type { OrderDocument } from '../../src/orders/index.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';
import { eventually } from '../support/waiting.js';

// The whole chain on the local stack: orders queue -> processOrder -> outbox -> publishOutbox ->
// order-events -> fulfilment -> requestShipment (this host's topic trigger) -> the carrier stand-in.
let stack: LocalStack;
let producer: ServiceBusClient;
let cosmos: CosmosClient;
let container: Container;
let host: LocalFunctionsHost;
const shipmentLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  // Each failure goes straight to a delayed copy 1 s later: the copy's path through the topic is what is tested.
  const settings: Record<string, string> = {
    ...stack.settings,
    TRANSIENT_RETRY_IN_INVOCATION_MS: '0',
    DELAYED_RETRY_ENABLED: 'true',
    DELAYED_RETRY_FIRST_DELAY_SECONDS: '1',
    DELAYED_RETRY_MAX_DELAY_SECONDS: '2',
  };
  Object.assign(process.env, settings);
  await import('../../functions/processOrder.js');
  await import('../../functions/publishOutbox.js');
  await import('../../functions/requestShipment.js');
  const functions = ['processOrder', 'publishOutbox', 'requestShipment'].map(
    (name) => [...registeredFunctions()].reverse().find((f) => f.metadata.name === name) as RegisteredFunction,
  );
  host = startLocalFunctionsHost(functions, {
    settings,
    host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    cosmos: { intervals: { feedPollDelayMs: 100, leaseAcquireIntervalMs: 200, leaseRenewIntervalMs: 300, leaseExpirationIntervalMs: 1500 } },
    onInvocation: (fn, _delivery, result) => {
      const line = fn.metadata.name === 'requestShipment' ? findOutcomeLine(result) : undefined;
      if (line) shipmentLines.push(line);
    },
  });
  await host.cosmosTriggers;
  producer = new ServiceBusClient(stack.serviceBus.connectionString);
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database(settings.COSMOS_DATABASE ?? 'orders').container(settings.COSMOS_ORDERS_CONTAINER ?? 'orders');
}, 60_000);

afterAll(async () => {
  await host?.close();
  await producer?.close();
  cosmos?.dispose();
  await stack?.close();
});

async function placeOrders(count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newOrderId());
  await producer
    .createSender('orders')
    .sendMessages(ids.map((id) => ({ messageId: `placed-${id}`, subject: 'OrderPlaced', contentType: 'application/json', body: orderPlaced(id) })));
  return ids;
}

async function orderOf(orderId: string): Promise<OrderDocument | undefined> {
  return (await container.item(orderId, orderId).read<OrderDocument>()).resource;
}

const bookingsFor = (orderId: string) => stack.carrier.bookings().filter((b) => b.orderReference === orderId);

describe('requestShipment in the local Functions host', () => {
  it('listens on the fulfilment subscription of the order-events topic', () => {
    expect(host.listeners).toContainEqual({ functionName: 'requestShipment', queueName: 'order-events/Subscriptions/fulfilment' });
  });

  it('books one shipment per order and records its id on the order', async () => {
    const ids = await placeOrders(5);
    await eventually('every order holds a shipment id', async () => (await Promise.all(ids.map(orderOf))).every((o) => o?.shipmentId !== undefined), 30_000);
    for (const id of ids) {
      expect(bookingsFor(id)).toHaveLength(1);
      expect((await orderOf(id))?.shipmentId).toBe(bookingsFor(id)[0]?.shipmentId);
    }
  });

  it('a carrier outage becomes delayed copies addressed to fulfilment alone: the audit subscription sees the event once, the carrier books once', async () => {
    await drainAll(producer, 'order-events', 'audit', true, 500);
    stack.carrier.inject({ kind: 'unavailable', times: 2 });
    const [id] = await placeOrders(1);
    await eventually('the order holds a shipment id', async () => (await orderOf(id ?? ''))?.shipmentId !== undefined, 20_000);
    expect(bookingsFor(id ?? '')).toHaveLength(1);
    const mine = shipmentLines.filter((l) => l.orderId === id).map((l) => l.outcome);
    expect(mine).toEqual(['rescheduled', 'rescheduled', 'created']);
    const audit = await drainAll(producer, 'order-events', 'audit', true, 1500);
    expect(audit.filter((m) => (m.body as { orderId?: string }).orderId === id).map((m) => String(m.messageId))).toHaveLength(1);
    expect(audit.some((m) => String(m.messageId).includes('~retry-'))).toBe(false);
  });

  it('a carrier refusal ends in the fulfilment dead-letter queue, its reason recorded for the dead-letter tool', async () => {
    stack.carrier.inject({ kind: 'refuse', status: 422, title: 'parcel too heavy' });
    const [id] = await placeOrders(1);
    await eventually(
      'the event in the fulfilment dead-letter queue',
      () => (stack.serviceBus.entity('order-events/subscriptions/fulfilment/$deadletterqueue')?.messages.size ?? 0) > 0,
      30_000,
    );
    const out: string[] = [];
    const env = {
      ServiceBusConnection: stack.serviceBus.connectionString,
      COSMOS_ENDPOINT: stack.cosmos.endpoint,
      COSMOS_KEY: stack.cosmos.key,
      COSMOS_DATABASE: stack.settings.COSMOS_DATABASE,
      COSMOS_ORDERS_CONTAINER: stack.settings.COSMOS_ORDERS_CONTAINER,
    };
    const code = await runDlqCli(
      [
        '--connection-string',
        stack.serviceBus.connectionString,
        '--topic',
        'order-events',
        '--subscription',
        'fulfilment',
        '--consumer-name',
        'fulfilment',
        'list',
        '--json',
      ],
      { stdout: (t) => out.push(t), stderr: () => undefined, env },
    );
    expect(code).toBe(0);
    const {
      messages: [listed],
    } = JSON.parse(out.join('\n')) as { messages: Record<string, unknown>[] };
    expect(listed).toMatchObject({
      deadLetterReason: 'MaxDeliveryCountExceeded',
      store: { kind: 'invalid', detail: expect.stringMatching(/^CarrierRefused: .*answered 422: parcel too heavy/) },
    });
    expect(bookingsFor(id ?? '')).toHaveLength(0);
    expect((await orderOf(id ?? ''))?.shipmentId).toBeUndefined();
  });
});
