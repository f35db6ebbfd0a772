import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusMessage } from '@azure/service-bus';
import Long from 'long';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost, LocalHostOptions } from '../../emulators/functions-host/localFunctionsHost.js';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { rejectedMessagesPartition, rejectionDocumentId } from '../../src/orders/index.js';
import { createOrdersContainer, documentsOf, testCosmosClient } from '../support/cosmosTestContainer.js';
import { orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { loadProcessOrder, outcomeLine } from '../support/processOrderHarness.js';
import { eventually, testQueue } from '../support/waiting.js';

const queue = testQueue;

let cosmos: CosmosClient;
let container: Container;
let processOrder: RegisteredFunction;
let emulator: ServiceBusEmulator;
let producer: ServiceBusClient;
const hosts: LocalFunctionsHost[] = [];

beforeAll(async () => {
  cosmos = testCosmosClient();
  container = await createOrdersContainer(cosmos);
  processOrder = await loadProcessOrder(container);
  emulator = await startServiceBusEmulator({
    port: 0,
    queues: {
      orders: queue({}),
      'orders-short-lock': queue({ lockDurationMs: 1_000 }),
      'orders-poison': queue({ maxDeliveryCount: 3 }),
    },
  });
  producer = new ServiceBusClient(emulator.connectionString);
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});
afterAll(async () => {
  await producer.close();
  await emulator.close();
  cosmos.dispose();
});

interface Observed {
  readonly outcomes: { messageId?: string; outcome: string; host: number; deliveryCount: number }[];
}

/** Starts `count` competing hosts on one queue, recording every invocation's outcome. */
function startHosts(queueName: string, count: number, extra: Partial<LocalHostOptions> = {}): Observed {
  const observed: Observed = { outcomes: [] };
  for (let host = 0; host < count; host += 1) {
    hosts.push(
      startLocalFunctionsHost([processOrder], {
        settings: { ServiceBusConnection: emulator.connectionString, ORDERS_QUEUE_NAME: queueName },
        host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 300_000, autoCompleteMessages: true },
        onInvocation: (_fn, delivery, result) => {
          const line = outcomeLine(result);
          observed.outcomes.push({ messageId: delivery.messageId, outcome: String(line.outcome), host, deliveryCount: delivery.deliveryCount });
        },
        ...extra,
      }),
    );
  }
  return observed;
}

async function queueIsEmpty(queueName: string): Promise<boolean> {
  const receiver = producer.createReceiver(queueName);
  const left = await receiver.peekMessages(1, { fromSequenceNumber: Long.fromNumber(1) });
  await receiver.close();
  return left.length === 0;
}

const placed = (orderId: string, overrides: Partial<ServiceBusMessage> = {}): ServiceBusMessage => ({
  body: orderPlaced(orderId),
  messageId: `m-${orderId}`,
  subject: 'OrderPlaced',
  ...overrides,
});
const paid = (orderId: string, paymentId: string, amount = 10): ServiceBusMessage => ({
  body: paymentReceived(orderId, { paymentId, amount }),
  messageId: paymentId,
  subject: 'PaymentReceived',
});

async function orderDocuments(orderId: string) {
  return (await documentsOf(container, orderId)).filter((d) => d.docType === 'order');
}

describe('end to end: producer -> Service Bus emulator -> local host -> processOrder -> Cosmos', () => {
  it('lets the broker drop producer retries inside the duplicate-detection window', async () => {
    const orderId = `dup-${randomUUID()}`;
    const observed = startHosts('orders', 1);
    const sender = producer.createSender('orders');
    for (let attempt = 0; attempt < 3; attempt += 1) await sender.sendMessages([placed(orderId), paid(orderId, `p-${orderId}`)]);
    await eventually('both messages to be processed', () => observed.outcomes.length >= 2);
    await eventually('the queue to drain', () => queueIsEmpty('orders'));
    expect(observed.outcomes.map((o) => o.outcome).sort()).toEqual(['created', 'created']);
    expect(await orderDocuments(orderId)).toEqual([expect.objectContaining({ amountPaid: 10, paymentCount: 1 })]);
  });

  it('absorbs the redelivery of a message whose consumer died after writing and before completing', async () => {
    const orderId = `crash-${randomUUID()}`;
    const observed = startHosts('orders-short-lock', 1, {
      // The process "dies": no complete, no abandon, no lock renewal. The lock runs out and Service Bus redelivers.
      host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 0, autoCompleteMessages: true },
      settle: (delivery) => (delivery.messageId === `p-${orderId}` && delivery.deliveryCount === 1 ? 'leave-locked' : undefined),
    });
    await producer.createSender('orders-short-lock').sendMessages([placed(orderId), paid(orderId, `p-${orderId}`)]);
    await eventually('the redelivered payment', () => observed.outcomes.some((o) => o.messageId === `p-${orderId}` && o.deliveryCount === 2));
    await eventually('the queue to drain', () => queueIsEmpty('orders-short-lock'));
    expect(observed.outcomes.filter((o) => o.messageId === `p-${orderId}`).map((o) => o.outcome)).toEqual(['created', 'duplicate']);
    expect(await orderDocuments(orderId)).toEqual([expect.objectContaining({ amountPaid: 10, paymentCount: 1 })]);
  });

  it('applies a payment once when the lock expires during slow processing and another copy runs meanwhile', async () => {
    const orderId = `slow-${randomUUID()}`;
    const observed = startHosts('orders-short-lock', 2, {
      host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 0, autoCompleteMessages: true },
      beforeInvocation: async (delivery) => {
        if (delivery.messageId === `p-${orderId}` && delivery.deliveryCount === 1) await new Promise((r) => setTimeout(r, 2_500));
      },
    });
    await producer.createSender('orders-short-lock').sendMessages(placed(orderId));
    await eventually('the order', async () => (await orderDocuments(orderId)).length === 1);
    await producer.createSender('orders-short-lock').sendMessages(paid(orderId, `p-${orderId}`));
    await eventually('both copies to finish', () => observed.outcomes.filter((o) => o.messageId === `p-${orderId}`).length >= 2);
    await eventually('the queue to drain', () => queueIsEmpty('orders-short-lock'));
    const copies = observed.outcomes.filter((o) => o.messageId === `p-${orderId}`);
    expect(copies.map((o) => [o.deliveryCount, o.outcome])).toEqual([
      [2, 'created'],
      [1, 'duplicate'],
    ]);
    expect(await orderDocuments(orderId)).toEqual([expect.objectContaining({ amountPaid: 10, paymentCount: 1 })]);
  }, 30_000);

  it('shares the work among four competing consumers with one effect per message', async () => {
    const run = randomUUID().slice(0, 8);
    const orderIds = Array.from({ length: 60 }, (_, i) => `compete-${run}-${i}`);
    const observed = startHosts('orders', 4);
    const sender = producer.createSender('orders');
    // Each order is followed at once by its payments: a consumer often picks a payment while another
    // is still writing its order, and the payment is parked beside it rather than lost or doubled.
    await sender.sendMessages(orderIds.flatMap((id) => [placed(id), paid(id, `p1-${id}`, 5), paid(id, `p2-${id}`, 2.5)]));
    await eventually(
      'every message to be applied or parked',
      () => observed.outcomes.filter((o) => o.outcome === 'created' || o.outcome === 'parked').length >= 180,
      60_000,
    );
    await eventually('the queue to drain', () => queueIsEmpty('orders'), 30_000);
    for (const id of orderIds) expect(await orderDocuments(id)).toEqual([expect.objectContaining({ amountPaid: 7.5, paymentCount: 2 })]);
    expect(new Set(observed.outcomes.map((o) => o.host)).size).toBeGreaterThan(1);
    expect(await queueIsEmpty('orders/$DeadLetterQueue')).toBe(true);
  }, 90_000);

  it('sends a conflicting payload to the dead-letter queue with its reason recorded, leaving the order intact', async () => {
    const orderId = `conflict-${randomUUID()}`;
    const observed = startHosts('orders-poison', 1);
    const sender = producer.createSender('orders-poison');
    await sender.sendMessages(placed(orderId));
    await eventually('the order', async () => (await orderDocuments(orderId)).length === 1);
    await sender.sendMessages(placed(orderId, { messageId: `other-${orderId}`, body: orderPlaced(orderId, { customerId: 'someone-else' }) }));
    const dlq = producer.createReceiver('orders-poison', { subQueueType: 'deadLetter' });
    let deadLettered: string[] = [];
    await eventually('the dead-letter queue', async () => {
      deadLettered = (await dlq.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).map((m) => `${String(m.messageId)}:${m.deadLetterReason}`);
      return deadLettered.length > 0;
    });
    expect(deadLettered).toEqual([`other-${orderId}:MaxDeliveryCountExceeded`]);
    expect(observed.outcomes.filter((o) => o.messageId === `other-${orderId}`).map((o) => o.outcome)).toEqual(['conflict', 'conflict', 'conflict']);
    const { resource: rejection } = await container.item(rejectionDocumentId(`other-${orderId}`), orderId).read();
    expect(rejection).toMatchObject({ reason: 'PayloadConflict', messageOrderId: orderId });
    expect(await orderDocuments(orderId)).toEqual([expect.objectContaining({ customerId: 'c-42' })]);
    await dlq.close();
  });

  it('survives a body nested 50,000 deep: rejected with a reason and a record, and the next message is processed', async () => {
    const orderId = `o-${randomUUID()}`;
    const observed = startHosts('orders-poison', 1);
    const sender = producer.createSender('orders-poison');
    const hostile = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    await sender.sendMessages({ body: hostile, messageId: `deep-${orderId}`, subject: 'OrderPlaced' });
    await sender.sendMessages(placed(orderId));
    await eventually('the next order', async () => (await orderDocuments(orderId)).length === 1);
    await eventually('the hostile message rejected on each delivery', () => observed.outcomes.filter((o) => o.messageId === `deep-${orderId}`).length === 3);
    expect(observed.outcomes.filter((o) => o.messageId === `deep-${orderId}`).map((o) => o.outcome)).toEqual(['invalid', 'invalid', 'invalid']);
    const { resource: rejection } = await container.item(rejectionDocumentId(`deep-${orderId}`), rejectedMessagesPartition(`deep-${orderId}`)).read();
    expect(rejection).toMatchObject({ reason: 'BodyTooDeep', description: 'the body nests deeper than 64 levels' });
  });

  it('reaches the function with a JSON object nested 50,000 deep sent as bytes (application/json): rejected with a reason, as the same text sent as a string is', async () => {
    // The Service Bus SDK parses a data body as JSON whatever its content type; the local host used to
    // serialise that value again for the invocation, recursively, and overflowed the stack before any
    // invocation: never settled, dead-lettered after maxDeliveryCount with no reason recorded.
    const orderId = `o-${randomUUID()}`;
    const observed = startHosts('orders-poison', 1);
    const sender = producer.createSender('orders-poison');
    const hostile = `{"orderId":"${orderId}","lines":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    await sender.sendMessages({ body: Buffer.from(hostile), contentType: 'application/json', messageId: `deep-bytes-${orderId}`, subject: 'OrderPlaced' });
    await sender.sendMessages(placed(orderId));
    await eventually('the next order', async () => (await orderDocuments(orderId)).length === 1);
    await eventually(
      'the hostile message rejected on each delivery',
      () => observed.outcomes.filter((o) => o.messageId === `deep-bytes-${orderId}`).length === 3,
    );
    expect(observed.outcomes.filter((o) => o.messageId === `deep-bytes-${orderId}`).map((o) => o.outcome)).toEqual(['invalid', 'invalid', 'invalid']);
    const { resource: rejection } = await container
      .item(rejectionDocumentId(`deep-bytes-${orderId}`), rejectedMessagesPartition(`deep-bytes-${orderId}`))
      .read();
    expect(rejection).toMatchObject({ reason: 'BodyTooDeep', description: 'the body nests deeper than 64 levels' });
  });
});
