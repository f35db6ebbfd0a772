import { ServiceBusClient } from '@azure/service-bus';
import Long from 'long';
import type { RegisteredFunction } from '../host/functionsCore.js';
import { startLocalFunctionsHost } from '../host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../host/localFunctionsHost.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { rejectionDocumentId } from '../../src/orders/index.js';
import { localContainer, localDatabase } from './localStack.js';
import type { LocalStack } from './localStack.js';
import { findOutcomeLine } from './outcomeLine.js';
import { sampleWorkload } from './sampleWorkload.js';
import { waitUntil } from './waitUntil.js';

interface Tally {
  deliveries: number;
  outcomes: Record<string, number>;
  crashes: number;
  byHost: number[];
}

const consumerCount = 2;

/**
 * Sends the sample workload through the local stack, with consumers competing and crashing, and
 * checks the end state: one order per distinct order, each with the amounts and status sent, the
 * queue empty and only the conflicting message in the dead-letter queue. True when all holds.
 */
export async function runDemo(stack: LocalStack, functions: readonly RegisteredFunction[], orderCount: number): Promise<boolean> {
  const workload = sampleWorkload(orderCount, Date.now().toString(36));
  const tally: Tally = { deliveries: 0, outcomes: {}, crashes: 0, byHost: Array(consumerCount).fill(0) };
  const hosts = startConsumers(stack, functions, tally, workload.crashOnFirstDelivery);
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const progress = setInterval(() => printProgress(stack, tally), 1000);
  try {
    const sender = producer.createSender('orders');
    for (let i = 0; i < workload.sends.length; i += 100) await sender.sendMessages(workload.sends.slice(i, i + 100));
    await waitUntil('the order the conflict targets', async () => (await container.item(workload.conflictOrderId, workload.conflictOrderId).read()).resource !== undefined, 60_000, 100);
    await sender.sendMessages(workload.conflict);
    const dlq = producer.createReceiver('orders', { subQueueType: 'deadLetter' });
    await waitUntil('the queue to drain and the conflict to be dead-lettered', async () => queueDepth(stack) === 0 && (stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.size ?? 0) > 0, 180_000, 100);
    clearInterval(progress);
    printProgress(stack, tally);
    const deadLettered = await dlq.peekMessages(50, { fromSequenceNumber: Long.fromNumber(1) });
    const { resources: orders } = await container.items
      .query<{ orderId: string; amountPaid: number; status: string; statusVersion: number; customerId: string }>("SELECT * FROM c WHERE c.docType = 'order'")
      .fetchAll();
    // A conflict's rejection record lives in the order's partition, beside the conflict document.
    const { resource: rejection } = await container.item(rejectionDocumentId(String(workload.conflict.messageId)), workload.conflictOrderId).read();
    const asSent = orders.every((o) => {
      const want = workload.expected.get(o.orderId);
      return want !== undefined && want.amountPaid === o.amountPaid && want.status === o.status && want.statusVersion === o.statusVersion;
    });
    const victimIntact = orders.find((o) => o.orderId === workload.conflictOrderId)?.customerId !== 'someone-else';
    const onlyConflictDeadLettered = deadLettered.length === 1 && deadLettered[0]?.messageId === workload.conflict.messageId;
    const checks = {
      'order documents = distinct orders': orders.length === workload.expected.size,
      'every order holds the amounts and status sent, counted once': asSent,
      'the conflicting payload changed nothing': victimIntact,
      'queue empty; the dead-letter queue holds only the conflict': queueDepth(stack) === 0 && onlyConflictDeadLettered,
      'the reason is recorded for operators (rejection|<MessageId>)': rejection?.reason === 'PayloadConflict',
    };
    printSummary(stack, workload, tally, orders.length, deadLettered.map((m) => `${String(m.messageId)} (${m.deadLetterReason})`), checks);
    await dlq.close();
    return Object.values(checks).every(Boolean);
  } finally {
    clearInterval(progress);
    await Promise.all(hosts.map((h) => h.close()));
    await producer.close();
    cosmos.dispose();
  }
}

function startConsumers(stack: LocalStack, functions: readonly RegisteredFunction[], tally: Tally, crashOnFirstDelivery: Set<string>): LocalFunctionsHost[] {
  return Array.from({ length: consumerCount }, (_, host) =>
    startLocalFunctionsHost(functions, {
      settings: stack.settings,
      // No lock renewal: a "crashed" consumer must let its lock run out, as a dead process does.
      host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 0, autoCompleteMessages: true },
      onInvocation: (_fn, _delivery, result) => {
        tally.deliveries += 1;
        tally.byHost[host] = (tally.byHost[host] ?? 0) + 1;
        const outcome = String(findOutcomeLine(result)?.outcome ?? 'unknown');
        tally.outcomes[outcome] = (tally.outcomes[outcome] ?? 0) + 1;
      },
      settle: (delivery, result) => {
        if (result.error === undefined && delivery.deliveryCount === 1 && crashOnFirstDelivery.has(delivery.messageId ?? '')) {
          tally.crashes += 1;
          return 'leave-locked';
        }
        return undefined;
      },
    }),
  );
}

function queueDepth(stack: LocalStack): number {
  return stack.serviceBus.entity('orders')?.messages.size ?? 0;
}


function printProgress(stack: LocalStack, tally: Tally): void {
  const o = tally.outcomes;
  const dlq = stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.size ?? 0;
  console.log(
    `  deliveries ${tally.deliveries} | created ${o.created ?? 0} duplicate ${o.duplicate ?? 0} stale ${o.stale ?? 0}` +
      ` retry ${o.retry ?? 0} conflict ${o.conflict ?? 0} | crashes ${tally.crashes} | queue ${queueDepth(stack)} | dead-letter ${dlq}`,
  );
}

function printSummary(
  stack: LocalStack,
  workload: ReturnType<typeof sampleWorkload>,
  tally: Tally,
  orderDocuments: number,
  deadLettered: string[],
  checks: Record<string, boolean>,
): void {
  const o = tally.outcomes;
  const rows: [string, string | number][] = [
    ['messages sent by the producer', `${workload.sends.length + 1}`],
    ['  of which producer retries, same MessageId', workload.producerRetriesSameId],
    ['  of which producer retries, new MessageId + idempotency-key', workload.producerRetriesNewId],
    ['dropped by the broker (duplicate detection)', stack.serviceBus.entity('orders')?.duplicatesDropped ?? 0],
    ['deliveries to processOrder', `${tally.deliveries} (consumers: ${tally.byHost.join(' / ')})`],
    ['consumers crashed after writing, before completing', tally.crashes],
    ['created (effects written)', o.created ?? 0],
    ['duplicates absorbed by the consumer', o.duplicate ?? 0],
    ['stale status changes ignored', o.stale ?? 0],
    ['redelivered (retry)', o.retry ?? 0],
    ['conflict deliveries (thrown until dead-lettered)', o.conflict ?? 0],
    ['dead-lettered', deadLettered.join(', ') || 'none'],
    ['order documents', `${orderDocuments} for ${workload.expected.size} distinct orders`],
  ];
  console.log('\nSummary');
  for (const [label, value] of rows) console.log(`  ${label.padEnd(62)} ${value}`);
  console.log('\nChecks');
  for (const [label, ok] of Object.entries(checks)) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${label}`);
  console.log(Object.values(checks).every(Boolean) ? '\nNo duplicate effect, nothing lost.' : '\nSomething is wrong: see the checks above.');
}
