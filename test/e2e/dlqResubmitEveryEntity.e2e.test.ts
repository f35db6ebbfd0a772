import { InMemoryDocumentStore } from '../../src/idempotency/index.js';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusMessage, ServiceBusReceivedMessage } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadQueueFile, startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';

/**
 * Resubmit from every dead-letter queue of infra/servicebus-queues.json, the emulator made from that
 * file: the copy must arrive where the original was dead-lettered. `audit` requires sessions and
 * takes only what is addressed to nobody: a copy sent `to: audit` without a SessionId is dropped by
 * the topic, and the original must not be removed then.
 */
let emulator: ServiceBusEmulator;
let client: ServiceBusClient;

beforeAll(async () => {
  emulator = await startServiceBusEmulator({ port: 0 });
  client = new ServiceBusClient(emulator.connectionString);
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});

// The operator-action records of these runs (there is no Cosmos DB here): every change is recorded first.
const actionLog = new InMemoryDocumentStore();

async function tool(entity: string[], ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDlqCli(['--connection-string', emulator.connectionString, ...entity, ...args], {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: {},
    actions: { store: actionLog },
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Receives one message from a queue or subscription (a session one: the message's session). */
async function receiveOne(entity: { queue?: string; topic?: string; subscription?: string }, sessionId?: string): Promise<ServiceBusReceivedMessage[]> {
  const receiver = entity.queue
    ? client.createReceiver(entity.queue)
    : sessionId === undefined
      ? client.createReceiver(entity.topic ?? '', entity.subscription ?? '')
      : await client.acceptSession(entity.topic ?? '', entity.subscription ?? '', sessionId);
  try {
    return await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
  } finally {
    await receiver.close();
  }
}

async function drain(topic: string, subscription: string, sessionId?: string): Promise<void> {
  const receiver =
    sessionId === undefined
      ? client.createReceiver(topic, subscription, { receiveMode: 'receiveAndDelete' })
      : await client.acceptSession(topic, subscription, sessionId, { receiveMode: 'receiveAndDelete' });
  await receiver.receiveMessages(10, { maxWaitTimeInMs: 500 });
  await receiver.close();
}

/** Dead-letters the message as the consumer of that entity would, then resubmits it with the tool. */
async function deadLetterThenResubmit(entity: { queue?: string; topic?: string; subscription?: string }, message: ServiceBusMessage) {
  const sender = client.createSender(entity.queue ?? entity.topic ?? '');
  await sender.sendMessages(message);
  await sender.close();
  // Only audit requires sessions: there the consumer takes the event's session (its order id).
  const sessionId = entity.subscription === 'audit' ? message.sessionId : undefined;
  const receiver = entity.queue
    ? client.createReceiver(entity.queue)
    : sessionId === undefined
      ? client.createReceiver(entity.topic ?? '', entity.subscription ?? '')
      : await client.acceptSession(entity.topic ?? '', entity.subscription ?? '', sessionId);
  const [original] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
  expect(original?.messageId).toBe(message.messageId);
  await receiver.deadLetterMessage(original!, { deadLetterReason: 'ConsumerGaveUp', deadLetterErrorDescription: 'for the test' });
  await receiver.close();
  const args = entity.queue ? ['--queue', entity.queue] : ['--topic', entity.topic ?? '', '--subscription', entity.subscription ?? ''];
  return tool(args, 'resubmit', String(message.messageId));
}

const event = (orderId: string, messageId: string): ServiceBusMessage => ({
  messageId,
  subject: 'OrderAccepted',
  sessionId: orderId,
  contentType: 'application/json',
  body: { orderId, acceptedAt: '2026-11-30T08:00:00Z' },
});

describe('resubmit from every dead-letter queue in infra/servicebus-queues.json', () => {
  const file = loadQueueFile();
  const [topic] = Object.keys(file.topics);

  it('covers every entity of the file: the orders queue, fulfilment and audit', () => {
    expect({ queues: Object.keys(file.queues), subscriptions: Object.keys(file.topics[topic ?? '']?.subscriptions ?? {}) }).toEqual({
      queues: ['orders'],
      subscriptions: ['fulfilment', 'audit'],
    });
  });

  it('the orders queue: the copy arrives in the queue', async () => {
    const orderId = newOrderId();
    const result = await deadLetterThenResubmit({ queue: 'orders' }, { messageId: `${orderId}-placed`, subject: 'OrderPlaced', body: orderPlaced(orderId) });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining('resubmitted') });
    const [copy] = await receiveOne({ queue: 'orders' });
    expect(copy?.applicationProperties?.['idempotency-key']).toBe(`${orderId}-placed`);
    expect(JSON.parse((await tool(['--queue', 'orders'], 'list', '--json')).stdout)).toEqual({ messages: [], truncated: [] });
  });

  it('fulfilment: the copy arrives in fulfilment, and audit does not get it again', async () => {
    const orderId = newOrderId();
    const result = await deadLetterThenResubmit({ topic: 'order-events', subscription: 'fulfilment' }, event(orderId, `${orderId}-accepted`));
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining('resubmitted') });
    const [copy] = await receiveOne({ topic: 'order-events', subscription: 'fulfilment' });
    expect({ key: copy?.applicationProperties?.['idempotency-key'], session: copy?.sessionId }).toEqual({ key: `${orderId}-accepted`, session: orderId });
    // audit holds the original event only (its rule takes what is addressed to nobody).
    const audit = [...(emulator.entity('order-events/subscriptions/audit')?.messages.values() ?? [])].map((m) => String(m.message.message_id));
    expect(audit.filter((id) => id.startsWith(orderId))).toEqual([`${orderId}-accepted`]);
  });

  it("audit (sessions, takes only what is addressed to nobody): the copy arrives in audit, in the original's session", async () => {
    const orderId = newOrderId();
    const result = await deadLetterThenResubmit({ topic: 'order-events', subscription: 'audit' }, event(orderId, `${orderId}-accepted`));
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: expect.stringContaining('resubmitted') });
    const [copy] = await receiveOne({ topic: 'order-events', subscription: 'audit' }, orderId);
    expect({ key: copy?.applicationProperties?.['idempotency-key'], session: copy?.sessionId }).toEqual({ key: `${orderId}-accepted`, session: orderId });
    expect(JSON.parse((await tool(['--topic', 'order-events', '--subscription', 'audit'], 'list', '--json')).stdout)).toEqual({ messages: [], truncated: [] });
    await drain('order-events', 'fulfilment');
  });
});

describe('a subscription whose rules the tool cannot vouch for', () => {
  it('refuses the resubmit, says why, and leaves the original dead-lettered', async () => {
    const { sqlFilter, toTopicConfig } = await import('../../emulators/servicebus-emulator/index.js');
    const base = toTopicConfig(loadQueueFile().topics['order-events']!);
    const fulfilment = base.subscriptions.fulfilment!;
    const patterned = await startServiceBusEmulator({
      port: 0,
      queues: {},
      topics: {
        events: { ...base, subscriptions: { patterned: { ...fulfilment, rules: [{ name: 'orders-only', filter: sqlFilter("sys.Label LIKE 'Order%'") }] } } },
      },
    });
    const own = new ServiceBusClient(patterned.connectionString);
    try {
      const sender = own.createSender('events');
      await sender.sendMessages({ messageId: 'evt-like', subject: 'OrderAccepted', body: { orderId: 'o-like' } });
      await sender.close();
      const receiver = own.createReceiver('events', 'patterned');
      const [m] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
      await receiver.deadLetterMessage(m!, { deadLetterReason: 'ConsumerGaveUp', deadLetterErrorDescription: 'for the test' });
      await receiver.close();
      const out: string[] = [];
      const code = await runDlqCli(
        ['--connection-string', patterned.connectionString, '--topic', 'events', '--subscription', 'patterned', 'resubmit', 'evt-like'],
        { stdout: (t) => out.push(t), stderr: () => undefined, env: {}, actions: { store: actionLog } },
      );
      expect({ code, out: out.join('\n') }).toEqual({
        code: 1,
        out: expect.stringMatching(
          /evt-like {2}refused {2}not sent: cannot prove events\/subscriptions\/patterned would get the copy.*orders-only.*LIKE is not supported/,
        ),
      });
      expect(patterned.entity('events/subscriptions/patterned/$deadletterqueue')?.messages.size).toBe(1);
      expect(patterned.entity('events/subscriptions/patterned')?.messages.size).toBe(0);
    } finally {
      await own.close();
      await patterned.close();
    }
  });
});
