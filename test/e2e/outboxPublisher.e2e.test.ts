import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import type { InvocationResult } from '../../emulators/functions-host/hostInvocation.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { drainAll } from '../../dev/local/drainSubscription.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { newOutboxDocument, orderEventsSource } from '../../src/outbox/index.js';
import type { OutboxDocument } from '../../src/outbox/index.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';
import { eventually } from '../support/waiting.js';

// The outbox through the whole chain: orders queue -> processOrder -> Cosmos -> change feed ->
// publishOutbox in the local host (leases in the leases container) -> order-events -> subscriptions.
let stack: LocalStack;
let producer: ServiceBusClient;
let cosmos: CosmosClient;
let container: Container;
let functions: RegisteredFunction[];
let settings: Record<string, string>;
const hosts: LocalFunctionsHost[] = [];
const invocations: { instance: string; documents: number; result: InvocationResult }[] = [];

// Short lease intervals so a takeover happens in seconds; the defaults are 13 s, 17 s and 60 s.
const intervals = { feedPollDelayMs: 100, leaseAcquireIntervalMs: 200, leaseRenewIntervalMs: 300, leaseExpirationIntervalMs: 1500 };

function startHost(instanceId: string): LocalFunctionsHost {
  const host = startLocalFunctionsHost(functions, {
    settings,
    host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    cosmos: {
      instanceId,
      intervals,
      onInvocation: (_fn, documents, result) => invocations.push({ instance: instanceId, documents: documents.length, result }),
    },
  });
  hosts.push(host);
  return host;
}

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  settings = { ...stack.settings };
  Object.assign(process.env, settings);
  await import('../../functions/processOrder.js');
  await import('../../functions/publishOutbox.js');
  functions = ['processOrder', 'publishOutbox'].map((name) => [...registeredFunctions()].reverse().find((f) => f.metadata.name === name)!);
  producer = new ServiceBusClient(stack.serviceBus.connectionString);
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database(settings.COSMOS_DATABASE ?? 'orders').container(settings.COSMOS_ORDERS_CONTAINER ?? 'orders');
}, 60_000);

afterAll(async () => {
  for (const host of hosts) await host.close();
  await producer.close();
  cosmos.dispose();
  await stack.close();
});

async function sendOrders(orderIds: readonly string[]): Promise<void> {
  const sender = producer.createSender('orders');
  await sender.sendMessages(
    orderIds.map((orderId) => ({ body: orderPlaced(orderId), subject: 'OrderPlaced', messageId: `m-${orderId}`, contentType: 'application/json' })),
  );
  await sender.close();
}

/** Everything on a subscription now, settled: what a consumer of it would have received (audit is session-enabled: every session). */
async function drainSubscription(subscription: string, expected: number): Promise<ServiceBusReceivedMessage[]> {
  const received: ServiceBusReceivedMessage[] = [];
  await eventually(`${expected} events on ${subscription}`, async () => {
    received.push(...(await drainAll(producer, 'order-events', subscription, subscription === 'audit', 200)));
    return received.length >= expected;
  });
  // Anything more that arrives shortly after would be a duplicate.
  received.push(...(await drainAll(producer, 'order-events', subscription, subscription === 'audit', 1000)));
  return received;
}

const outboxOf = async (orderId: string) =>
  (await container.items.query<OutboxDocument>({ query: "SELECT * FROM c WHERE c.docType = 'outbox'" }, { partitionKey: orderId }).fetchAll()).resources;

async function dlq(...args: string[]) {
  const out: string[] = [];
  const env = {
    COSMOS_ENDPOINT: stack.settings.COSMOS_ENDPOINT,
    COSMOS_KEY: stack.settings.COSMOS_KEY,
    COSMOS_ORDERS_CONTAINER: stack.settings.COSMOS_ORDERS_CONTAINER,
    COSMOS_DATABASE: stack.settings.COSMOS_DATABASE,
  };
  const code = await runDlqCli(args, { stdout: (t) => out.push(t), stderr: () => undefined, env });
  return { code, stdout: out.join('\n') };
}

const countBy = (ids: readonly string[]) => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>());

describe('the outbox publisher on the local stack', () => {
  it('publishes one OrderAccepted per order to every subscription, in CloudEvents binary mode, and marks each entry published', async () => {
    const host = startHost('instance-a');
    await host.cosmosTriggers;
    const orderIds = Array.from({ length: 20 }, () => newOrderId());
    await sendOrders(orderIds);
    const [fulfilment, audit] = await Promise.all([drainSubscription('fulfilment', 20), drainSubscription('audit', 20)]);
    for (const received of [fulfilment, audit]) {
      expect([...countBy(received.map((m) => String(m.messageId))).values()].every((n) => n === 1)).toBe(true);
      expect(received.map((m) => (m.body as { orderId: string }).orderId).sort()).toEqual([...orderIds].sort());
    }
    const first = fulfilment.find((m) => (m.body as { orderId: string }).orderId === orderIds[0])!;
    expect(first).toMatchObject({ subject: 'OrderAccepted', contentType: 'application/json', sessionId: orderIds[0], correlationId: `m-${orderIds[0]}` });
    expect(first.applicationProperties).toMatchObject({
      'cloudEvents:specversion': '1.0',
      'cloudEvents:id': first.messageId,
      'cloudEvents:source': orderEventsSource,
      'cloudEvents:type': 'OrderAccepted',
    });
    await eventually('every entry marked', async () => (await Promise.all(orderIds.map(outboxOf))).flat().every((d) => d.state === 'published'));
    const [entry] = await outboxOf(orderIds[0]!);
    expect(entry).toMatchObject({ state: 'published', ttl: 7 * 24 * 3600, message: { messageId: first.messageId } });
    expect(entry?.publishedAt).toEqual(expect.any(String));
    await host.close();
  }, 60_000);

  it('publishes each event once when the publisher dies between send and mark, and another instance takes its lease over', async () => {
    const dying = startHost('instance-dying');
    await dying.cosmosTriggers;
    // Every mark fails: the events go out, the entries stay pending, and the checkpoint never moves.
    stack.cosmos.injectFault({ statusCode: 503, times: 10_000, method: 'PUT', urlIncludes: 'outbox|' });
    const orderIds = Array.from({ length: 10 }, () => newOrderId());
    const sentBefore = invocations.length;
    await sendOrders(orderIds);
    await eventually('the dying instance sent the events', () =>
      invocations.slice(sentBefore).some((i) => i.instance === 'instance-dying' && i.result.error !== undefined),
    );
    await dying.close({ releaseLeases: false });
    stack.cosmos.clearFaults();
    expect((await Promise.all(orderIds.map(outboxOf))).flat().every((d) => d.state === 'pending')).toBe(true);

    const survivor = startHost('instance-survivor');
    await eventually('the survivor took the expired lease over', async () => (await survivor.cosmosTriggers)[0]?.ownedLeases().length === 1, 10_000);
    await eventually(
      'every entry marked by the survivor',
      async () => (await Promise.all(orderIds.map(outboxOf))).flat().every((d) => d.state === 'published'),
      20_000,
    );
    expect(invocations.some((i) => i.instance === 'instance-survivor')).toBe(true);
    const received = await drainSubscription('fulfilment', 10);
    const counts = countBy(received.map((m) => String(m.messageId)));
    expect(counts.size).toBe(10);
    expect([...counts.values()].every((n) => n === 1)).toBe(true); // the re-sends fell inside the duplicate detection window
    await drainSubscription('audit', 10);
    await survivor.close();
  }, 90_000);

  it('sets aside an entry Service Bus refuses, with its reason, while the others in its batch go out', async () => {
    const host = startHost('instance-poison');
    await host.cosmosTriggers;
    const orderId = newOrderId();
    const createdAt = new Date().toISOString();
    const poisoned = [
      newOutboxDocument({ id: `outbox|Test|nowhere-${orderId}`, orderId, eventType: 'Test', destination: 'no-such-topic', body: { orderId }, createdAt }),
      newOutboxDocument({
        id: `outbox|Test|huge-${orderId}`,
        orderId,
        eventType: 'Test',
        destination: 'order-events',
        body: { orderId, padding: 'x'.repeat(300 * 1024) },
        createdAt,
      }),
      newOutboxDocument({ id: `outbox|Test|fine-${orderId}`, orderId, eventType: 'Test', destination: 'order-events', body: { orderId }, createdAt }),
    ];
    await container.items.batch(
      poisoned.map((d) => ({ operationType: 'Create' as const, resourceBody: d as never })),
      orderId,
    );
    await eventually('all three handled', async () => (await outboxOf(orderId)).every((d) => d.state !== 'pending'));
    const byId = new Map((await outboxOf(orderId)).map((d) => [d.id, d]));
    expect(byId.get(`outbox|Test|nowhere-${orderId}`)).toMatchObject({ state: 'failed', failure: { reason: 'MessagingEntityNotFound' } });
    expect(byId.get(`outbox|Test|huge-${orderId}`)).toMatchObject({ state: 'failed', failure: { reason: 'MessageSizeExceeded' } });
    expect(byId.get(`outbox|Test|fine-${orderId}`)).toMatchObject({ state: 'published' });
    const audit = await drainSubscription('audit', 1);
    expect(audit.map((m) => m.messageId)).toEqual([`outbox|Test|fine-${orderId}`]);

    // The operator's view: both set aside, with the broker's reasons.
    const listed = (JSON.parse((await dlq('outbox', 'list', '--order', orderId, '--json')).stdout) as { entries: { messageId: string; reason: string }[] })
      .entries;
    expect(listed.map((e) => [e.messageId, e.reason]).sort()).toEqual([
      [`outbox|Test|huge-${orderId}`, 'MessageSizeExceeded'],
      [`outbox|Test|nowhere-${orderId}`, 'MessagingEntityNotFound'],
    ]);
    // Requeued with its cause still there, it goes through the publisher again and is set aside again, with a new time.
    const before = byId.get(`outbox|Test|nowhere-${orderId}`)?.failure?.at;
    const requeue = await dlq('outbox', 'requeue', `outbox|Test|nowhere-${orderId}`);
    expect(requeue.code).toBe(0);
    expect(requeue.stdout).toContain('requeued 1');
    await eventually('set aside again', async () => {
      const again = (await outboxOf(orderId)).find((d) => d.id === `outbox|Test|nowhere-${orderId}`);
      return again?.state === 'failed' && again.failure?.at !== before;
    });
    expect((await dlq('outbox', 'requeue', 'no-such-message')).code).toBe(1);
    await host.close();
  }, 60_000);

  it("keeps one order's events in write order on the session-enabled audit subscription (the session id is the order id)", async () => {
    const host = startHost('instance-order');
    await host.cosmosTriggers;
    const orderId = newOrderId();
    const types = ['OrderAccepted', 'PaymentApplied', 'OrderShipped', 'OrderDelivered'];
    // Four commits, one after another, as four changes of one order would write them.
    for (const [i, eventType] of types.entries()) {
      await container.items.create(
        newOutboxDocument({
          id: `outbox|${eventType}|${orderId}`,
          orderId,
          eventType,
          destination: 'order-events',
          body: { orderId, step: i },
          createdAt: new Date().toISOString(),
        }),
      );
    }
    await eventually('all four published', async () => (await outboxOf(orderId)).filter((d) => d.state === 'published').length === 4);
    const session = await producer.acceptSession('order-events', 'audit', orderId);
    const received = await session.receiveMessages(10, { maxWaitTimeInMs: 1000 });
    for (const m of received) await session.completeMessage(m);
    await session.close();
    expect(received.map((m) => m.subject)).toEqual(types);
    expect(received.every((m) => m.sessionId === orderId)).toBe(true);
    await drainSubscription('fulfilment', 1); // its rule takes OrderAccepted only
    await host.close();
  }, 60_000);
});
