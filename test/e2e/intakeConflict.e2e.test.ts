import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import type { HttpListener } from '../../emulators/functions-host/httpTriggers.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { findOutcomeLine } from '../../dev/local/outcomeLine.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { idempotencyKeyHeader } from '../../src/http/idempotencyKeyHeader.js';
import type { OutboxDocument } from '../../src/outbox/index.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';
import { eventually } from '../support/waiting.js';

// A producer's OrderPlaced straight on the queue and the same order over HTTP with another body,
// both inside the queue's duplicate detection window (10 minutes, as deployed):
//
// producer        OrderPlaced o-1, body A, MessageId o-1 ------------------> orders (accepted)
// client          POST /api/orders o-1, body B -> 202 (no order stored yet: nothing to refuse)
// publishOutbox   sends the OrderPlaced entry (body B) -----------------------> orders (?)
// processOrder    starts only now: stores A; B must meet the fingerprint check, not the broker's filter
//
// With MessageId = the order id the broker dropped B silently: A stored, the entry marked published,
// no conflict anywhere, and a client holding a 202 for B.
let stack: LocalStack;
let cosmos: CosmosClient;
let container: Container;
let producer: ServiceBusClient;
let functions: Map<string, RegisteredFunction>;
const hosts: LocalFunctionsHost[] = [];
const deliveries: { messageId?: string; outcome?: unknown }[] = [];
const intervals = { feedPollDelayMs: 100, leaseAcquireIntervalMs: 200, leaseRenewIntervalMs: 300, leaseExpirationIntervalMs: 1500 };

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings);
  await import('../../functions/submitOrder.js');
  await import('../../functions/publishOutbox.js');
  await import('../../functions/processOrder.js');
  functions = new Map(
    ['submitOrder', 'publishOutbox', 'processOrder'].map((name) => [
      name,
      [...registeredFunctions()].reverse().find((f) => f.metadata.name === name) as RegisteredFunction,
    ]),
  );
  producer = new ServiceBusClient(stack.serviceBus.connectionString);
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database(stack.settings.COSMOS_DATABASE ?? 'orders').container(stack.settings.COSMOS_ORDERS_CONTAINER ?? 'orders');
}, 60_000);

async function closeHosts(): Promise<void> {
  for (const host of hosts.splice(0)) await host.close();
}

afterAll(async () => {
  await closeHosts();
  await producer?.close();
  cosmos?.dispose();
  await stack?.close();
});

function startHost(names: readonly string[], http: boolean): LocalFunctionsHost {
  const host = startLocalFunctionsHost(
    names.map((name) => functions.get(name) as RegisteredFunction),
    {
      settings: stack.settings,
      host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
      cosmos: { intervals },
      ...(http ? { http: { port: 0 } } : {}),
      onInvocation: (fn, delivery, result) => {
        if (fn.metadata.name === 'processOrder') deliveries.push({ messageId: delivery.messageId, outcome: findOutcomeLine(result)?.outcome });
      },
    },
  );
  hosts.push(host);
  return host;
}

async function post(listener: HttpListener, key: string, body: unknown): Promise<Response> {
  return fetch(new URL('api/orders', listener.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKeyHeader(key) },
    body: JSON.stringify(body),
  });
}

async function dlq(...args: string[]): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  const env = {
    COSMOS_ENDPOINT: stack.settings.COSMOS_ENDPOINT,
    COSMOS_KEY: stack.settings.COSMOS_KEY,
    COSMOS_ORDERS_CONTAINER: stack.settings.COSMOS_ORDERS_CONTAINER,
    COSMOS_DATABASE: stack.settings.COSMOS_DATABASE,
  };
  const code = await runDlqCli(['--connection-string', stack.serviceBus.connectionString, ...args], {
    stdout: (t) => out.push(t),
    stderr: () => undefined,
    env,
  });
  return { code, stdout: out.join('\n') };
}

const documentsOf = async <T>(orderId: string, docType: string) =>
  (
    await container.items
      .query<T>({ query: 'SELECT * FROM c WHERE c.docType = @t', parameters: [{ name: '@t', value: docType }] }, { partitionKey: orderId })
      .fetchAll()
  ).resources;
const deliveredIds = () => [...new Set(deliveries.map((d) => d.messageId))];
const queueIsEmpty = () => (stack.serviceBus.entity('orders')?.messages.size ?? 0) === 0;
const deadLettered = (messageId: string) =>
  [...(stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.values() ?? [])].some((m) => String(m.message.message_id) === messageId);

describe('an order sent on the queue directly and over HTTP with another body, inside the duplicate detection window', () => {
  it('reaches the consumer twice: the second body is recorded as a conflict and dead-lettered, and the operator tool shows it', async () => {
    const orderId = newOrderId();
    const intake = startHost(['submitOrder', 'publishOutbox'], true);
    await intake.cosmosTriggers;
    const listener = await intake.http;
    if (!listener) throw new Error('the host serves no HTTP');

    const sender = producer.createSender('orders');
    await sender.sendMessages({
      body: orderPlaced(orderId, { customerId: 'c-direct' }),
      subject: 'OrderPlaced',
      messageId: orderId,
      contentType: 'application/json',
    });
    await sender.close();
    const accepted = await post(listener, randomUUID(), orderPlaced(orderId));
    expect(accepted.status).toBe(202);

    let entry: OutboxDocument | undefined;
    await eventually('the OrderPlaced entry published', async () => {
      entry = (await documentsOf<OutboxDocument>(orderId, 'outbox')).find((e) => e.eventType === 'OrderPlaced');
      return entry?.state === 'published';
    });
    const intakeMessageId = entry!.message.messageId;
    expect(((await accepted.json()) as { messageId: string }).messageId).toBe(intakeMessageId);

    startHost(['processOrder'], false);
    await eventually(
      'the order stored and the queue drained',
      async () => (await container.item(orderId, orderId).read()).resource !== undefined && queueIsEmpty(),
    );

    // Both bodies reached the consumer: the broker dropped neither.
    expect(deliveredIds()).toEqual(expect.arrayContaining([orderId, intakeMessageId]));
    expect((await container.item(orderId, orderId).read<{ customerId: string }>()).resource?.customerId).toBe('c-direct');
    const [conflict] = await documentsOf<{ incoming: { messageId: string }; existing: { messageId: string } }>(orderId, 'conflict');
    expect(conflict).toMatchObject({ incoming: { messageId: intakeMessageId }, existing: { messageId: orderId } });
    expect(await documentsOf(orderId, 'rejection')).toEqual([expect.objectContaining({ reason: 'PayloadConflict', messageId: intakeMessageId })]);
    expect(deliveries.filter((d) => d.messageId === intakeMessageId).map((d) => d.outcome)).toContain('conflict');

    await eventually('the conflicting OrderPlaced in the dead-letter queue', () => deadLettered(intakeMessageId));
    const shown = await dlq('show', intakeMessageId);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      messageId: intakeMessageId,
      deadLetterReason: 'MaxDeliveryCountExceeded',
      stored: {
        differences: [{ path: 'customerId', message: 'c-42', stored: 'c-direct' }],
        rejection: { reason: 'PayloadConflict', messageId: intakeMessageId },
        conflict: { incoming: { messageId: intakeMessageId }, existing: { messageId: orderId, documentId: orderId } },
      },
    });
    await closeHosts();
  }, 60_000);

  it("in the other order too: a producer's OrderPlaced with another body after the published 202 is not dropped behind ours, it is a recorded conflict", async () => {
    const orderId = newOrderId();
    const intake = startHost(['submitOrder', 'publishOutbox'], true);
    await intake.cosmosTriggers;
    const listener = await intake.http;
    if (!listener) throw new Error('the host serves no HTTP');
    const accepted = await post(listener, randomUUID(), orderPlaced(orderId));
    expect(accepted.status).toBe(202);
    const intakeMessageId = ((await accepted.json()) as { messageId: string }).messageId;
    await eventually('the OrderPlaced entry published', async () =>
      (await documentsOf<OutboxDocument>(orderId, 'outbox')).some((e) => e.eventType === 'OrderPlaced' && e.state === 'published'),
    );

    const sender = producer.createSender('orders');
    await sender.sendMessages({
      body: orderPlaced(orderId, { customerId: 'c-direct' }),
      subject: 'OrderPlaced',
      messageId: orderId,
      contentType: 'application/json',
    });
    await sender.close();
    startHost(['processOrder'], false);
    await eventually("the producer's OrderPlaced in the dead-letter queue", () => deadLettered(orderId));

    expect(deliveredIds()).toEqual(expect.arrayContaining([orderId, intakeMessageId]));
    expect((await container.item(orderId, orderId).read<{ customerId: string }>()).resource?.customerId).toBe('c-42');
    expect(await documentsOf(orderId, 'rejection')).toEqual([expect.objectContaining({ reason: 'PayloadConflict', messageId: orderId })]);
    expect(JSON.parse((await dlq('show', orderId)).stdout)).toMatchObject({
      stored: { differences: [{ path: 'customerId', message: 'c-direct', stored: 'c-42' }], rejection: { reason: 'PayloadConflict' } },
    });
    await closeHosts();
  }, 60_000);
});
