import type { Container } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import Long from 'long';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { rejectionDocumentId } from '../../src/orders/index.js';
import { localContainer, localDatabase } from './localStack.js';
import type { LocalStack } from './localStack.js';
import { findOutcomeLine } from './outcomeLine.js';
import { flushTelemetry } from '../../src/telemetry/azureMonitor.js';
import { telemetrySummary } from '../../emulators/ingestion-emulator/telemetryReport.js';
import { submitOrderOverHttp } from './intakeClient.js';
import type { LocalTelemetry } from './localTelemetry.js';
import type { IntakeAnswer } from './intakeClient.js';
import { sampleWorkload } from './sampleWorkload.js';
import type { Placement } from './sampleWorkload.js';
import { waitUntil } from './waitUntil.js';
import { drainAll } from './drainSubscription.js';
import { loadQueueFile } from '../../emulators/servicebus-emulator/index.js';

interface Tally {
  deliveries: number;
  outcomes: Record<string, number>;
  crashes: number;
  byHost: number[];
  publishInvocations: number;
  publisherKills: number;
  /** requestShipment's deliveries and outcomes, apart from processOrder's. */
  shipmentDeliveries: number;
  shipmentOutcomes: Record<string, number>;
  /** submitOrder's invocations and their outcomes. */
  requests: number;
  requestOutcomes: Record<string, number>;
}

const consumerCount = 2;
/** Lease intervals of seconds, not the host's minute, so a killed publisher's lease is taken over while you watch. */
const publisherIntervals = { feedPollDelayMs: 200, leaseAcquireIntervalMs: 1000, leaseRenewIntervalMs: 1500, leaseExpirationIntervalMs: 4000 };
/** The first marks fail: the events are out, their entries still pending, as if the publisher died between send and mark. */
const failedMarks = 10;
/** The carrier misbehaves a few times: an answer lost after it booked, and an outage before it books. */
const carrierFaults = { droppedAfterBooking: 3, unavailable: 3 };

/**
 * Sends the sample workload through the local stack, with consumers competing and crashing, and
 * checks the end state: one order per distinct order, each with the amounts and status sent, the
 * queue empty and only the conflicting message in the dead-letter queue. True when all holds.
 */
export async function runDemo(stack: LocalStack, functions: readonly RegisteredFunction[], orderCount: number, telemetry?: LocalTelemetry): Promise<boolean> {
  const workload = sampleWorkload(orderCount, Date.now().toString(36));
  const tally: Tally = {
    deliveries: 0,
    outcomes: {},
    crashes: 0,
    byHost: Array(consumerCount).fill(0),
    publishInvocations: 0,
    publisherKills: 0,
    shipmentDeliveries: 0,
    shipmentOutcomes: {},
    requests: 0,
    requestOutcomes: {},
  };
  stack.cosmos.injectFault({ statusCode: 503, times: failedMarks, method: 'PUT', urlIncludes: 'outbox|' });
  stack.carrier.inject({ kind: 'drop-after-booking', times: carrierFaults.droppedAfterBooking });
  stack.carrier.inject({ kind: 'unavailable', times: carrierFaults.unavailable });
  const intakeUrls: string[] = [];
  const hosts = startConsumers(stack, functions, tally, workload.crashOnFirstDelivery, intakeUrls);
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const progress = setInterval(() => printProgress(stack, tally), 1000);
  try {
    const sender = producer.createSender('orders');
    await waitUntil('the HTTP intake on every instance', () => intakeUrls.filter(Boolean).length === consumerCount, 30_000);
    // Orders over HTTP while their payments and status changes go on the queue: many arrive first and are parked.
    const [answers] = await Promise.all([
      submitAll(workload.placements, () => intakeUrls.filter(Boolean)),
      (async () => {
        for (let i = 0; i < workload.sends.length; i += 100) await sender.sendMessages(workload.sends.slice(i, i + 100));
      })(),
    ]);
    const victim = workload.placements.find((p) => p.orderId === workload.conflictOrderId);
    const reused =
      victim &&
      (await submitOrderOverHttp(victim.idempotencyKey, { ...victim.body, customerId: 'someone-else' }, { baseUrls: () => intakeUrls.filter(Boolean) }));
    await waitUntil(
      'the order the conflict targets',
      async () => (await container.item(workload.conflictOrderId, workload.conflictOrderId).read()).resource !== undefined,
      60_000,
      100,
    );
    await sender.sendMessages(workload.conflict);
    const dlq = producer.createReceiver('orders', { subQueueType: 'deadLetter' });
    await waitUntil(
      'the queue to drain and the conflict to be dead-lettered',
      async () => queueDepth(stack) === 0 && (stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.size ?? 0) > 0,
      180_000,
      100,
    );
    await waitUntil('every outbox entry to be published', async () => (await outboxStates(container)).pending === 0, 120_000, 200);
    // fulfilment is requestShipment's: each event there becomes a booking. audit is drained here.
    const events = await Promise.all(['audit'].map((subscription) => drainSubscription(producer, subscription, workload.expected.size)));
    await waitUntil('a booking for every order', async () => (await shippedOrders(container)) >= workload.expected.size, 120_000, 200);
    const outbox = await outboxStates(container);
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
      'each order accepted once over HTTP; every client retry got the same answer replayed':
        acceptedOnce(answers, workload.placements.length) && tally.requestOutcomes.created === workload.placements.length,
      'an Idempotency-Key reused with another body is refused (422), nothing changed': reused?.status === 422 && victimIntact,
      'events published = 2 per order (OrderPlaced, OrderAccepted), every outbox entry marked':
        outbox.published === 2 * orders.length && outbox.pending === 0 && outbox.failed === 0,
      'each OrderAccepted once on the audit subscription': events.every((e) => e.distinct === orders.length && e.received === orders.length),
      'one booking per order at the carrier, each order holding its shipment id':
        stack.carrier.stats().bookings === orders.length && (await shippedOrders(container)) === orders.length,
    };
    printSummary(
      stack,
      workload,
      tally,
      answers,
      orders.length,
      deadLettered.map((m) => `${String(m.messageId)} (${m.deadLetterReason})`),
      checks,
      events,
    );
    await dlq.close();
    if (telemetry) await printTelemetry(telemetry, workload.placements[0]?.traceId);
    return Object.values(checks).every(Boolean);
  } finally {
    clearInterval(progress);
    await Promise.all(hosts.map((h) => h.close()));
    await producer.close();
    cosmos.dispose();
  }
}

/**
 * Two consumers, each also running the outbox publisher; they share its leases, so one publishes at
 * a time. The first publisher to run is killed (its lease left to expire) and replaced, so the run
 * shows a takeover from the last checkpoint with the same MessageIds sent again.
 */
function startConsumers(
  stack: LocalStack,
  functions: readonly RegisteredFunction[],
  tally: Tally,
  crashOnFirstDelivery: Set<string>,
  intakeUrls: string[],
): LocalFunctionsHost[] {
  const hosts: LocalFunctionsHost[] = [];
  const start = (host: number): LocalFunctionsHost => {
    intakeUrls[host] = '';
    const started = startLocalFunctionsHost(functions, {
      settings: stack.settings,
      http: {
        port: 0,
        onInvocation: (_fn, result) => {
          tally.requests += 1;
          const outcome = String(findOutcomeLine(result)?.outcome ?? 'unknown');
          tally.requestOutcomes[outcome] = (tally.requestOutcomes[outcome] ?? 0) + 1;
        },
      },
      cosmos: {
        intervals: publisherIntervals,
        onInvocation: () => {
          tally.publishInvocations += 1;
          if (tally.publisherKills > 0) return;
          tally.publisherKills += 1;
          const dying = hosts[host];
          hosts[host] = start(host);
          void dying?.close({ releaseLeases: false });
        },
      },
      // No lock renewal: a "crashed" consumer must let its lock run out, as a dead process does.
      host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 0, autoCompleteMessages: true },
      onInvocation: (fn, _delivery, result) => {
        if (fn.metadata.name === 'requestShipment') {
          tally.shipmentDeliveries += 1;
          const outcome = String(findOutcomeLine(result)?.outcome ?? 'unknown');
          tally.shipmentOutcomes[outcome] = (tally.shipmentOutcomes[outcome] ?? 0) + 1;
          return;
        }
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
    });
    void started.http.then((listener) => {
      if (listener) intakeUrls[host] = listener.url;
    });
    return started;
  };
  for (let host = 0; host < consumerCount; host += 1) hosts.push(start(host));
  return hosts;
}

/** What the exporter sent, read back from the stand-in as Application Insights would store it. */
async function printTelemetry(telemetry: LocalTelemetry, traceId: string | undefined): Promise<void> {
  await flushTelemetry();
  console.log('\nTelemetry');
  if (telemetry.destination !== 'stand-in')
    return console.log(
      '  exported to the Application Insights resource of APPLICATIONINSIGHTS_CONNECTION_STRING: see README, "Telemetry in Application Insights"',
    );
  for (const line of telemetrySummary(await telemetry.envelopes(), traceId)) console.log(line);
}

/** Every order through the intake, 16 clients at a time; a `concurrent` one sends its copy at once, an `after-answer` one once answered. */
async function submitAll(placements: readonly Placement[], baseUrls: () => readonly string[]): Promise<{ placement: Placement; answers: IntakeAnswer[] }[]> {
  const results: { placement: Placement; answers: IntakeAnswer[] }[] = [];
  let next = 0;
  const client = async () => {
    while (next < placements.length) {
      const placement = placements[next++] as Placement;
      const send = () =>
        submitOrderOverHttp(placement.idempotencyKey, placement.body, {
          baseUrls,
          traceparent: `00-${placement.traceId}-${placement.traceId.slice(0, 16)}-01`,
        });
      const answers = placement.clientRetry === 'concurrent' ? await Promise.all([send(), send()]) : [await send()];
      if (placement.clientRetry === 'after-answer') answers.push(await send());
      results.push({ placement, answers });
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  return results;
}

/**
 * Every answer a client got for an order is the same 202, at most one of them fresh (none when the
 * first answer was lost with an instance that went away: the client's retry got it replayed).
 */
function acceptedOnce(results: readonly { answers: readonly IntakeAnswer[] }[], orders: number): boolean {
  return (
    results.length === orders &&
    results.every(
      ({ answers }) =>
        answers.every((a) => a.status === 202 && JSON.stringify(a.body) === JSON.stringify(answers[0]?.body)) && answers.filter((a) => !a.replayed).length <= 1,
    )
  );
}

/** Orders whose shipment id is recorded, and whose id is one the carrier booked. */
async function shippedOrders(container: Container): Promise<number> {
  const { resources } = await container.items
    .query<{ shipmentId?: string }>("SELECT c.shipmentId FROM c WHERE c.docType = 'order' AND IS_DEFINED(c.shipmentId)")
    .fetchAll();
  return resources.length;
}

async function outboxStates(container: Container): Promise<Record<'pending' | 'published' | 'failed', number>> {
  const { resources } = await container.items.query<{ state: string }>("SELECT c.state FROM c WHERE c.docType = 'outbox'").fetchAll();
  const count = (state: string) => resources.filter((r) => r.state === state).length;
  return { pending: count('pending'), published: count('published'), failed: count('failed') };
}

/** What a subscriber would have received: every message on the subscription (each session of a session-enabled one), and how many distinct MessageIds. */
async function drainSubscription(
  client: ServiceBusClient,
  subscription: string,
  expected: number,
): Promise<{ subscription: string; received: number; distinct: number }> {
  const sessions = loadQueueFile().topics['order-events']?.subscriptions[subscription]?.requiresSession === true;
  const ids: string[] = [];
  await waitUntil(
    `${expected} events on ${subscription}`,
    async () => {
      ids.push(...(await drainAll(client, 'order-events', subscription, sessions, 200)).map((m) => String(m.messageId)));
      return ids.length >= expected;
    },
    60_000,
    0,
  );
  // A duplicate would arrive right behind.
  ids.push(...(await drainAll(client, 'order-events', subscription, sessions, 1000)).map((m) => String(m.messageId)));
  return { subscription, received: ids.length, distinct: new Set(ids).size };
}

function queueDepth(stack: LocalStack): number {
  return stack.serviceBus.entity('orders')?.messages.size ?? 0;
}

function printProgress(stack: LocalStack, tally: Tally): void {
  const o = tally.outcomes;
  const dlq = stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.size ?? 0;
  console.log(
    `  deliveries ${tally.deliveries} | created ${o.created ?? 0} duplicate ${o.duplicate ?? 0} stale ${o.stale ?? 0}` +
      ` retry ${o.retry ?? 0} conflict ${o.conflict ?? 0} | crashes ${tally.crashes} | queue ${queueDepth(stack)} | dead-letter ${dlq}` +
      ` | publisher batches ${tally.publishInvocations} | bookings ${stack.carrier.stats().bookings}`,
  );
}

function printSummary(
  stack: LocalStack,
  workload: ReturnType<typeof sampleWorkload>,
  tally: Tally,
  submissions: readonly { answers: readonly IntakeAnswer[] }[],
  orderDocuments: number,
  deadLettered: string[],
  checks: Record<string, boolean>,
  events: readonly { subscription: string; received: number; distinct: number }[],
): void {
  const o = tally.outcomes;
  const carrier = stack.carrier.stats();
  const answers = submissions.flatMap((s) => s.answers);
  const r = tally.requestOutcomes;
  const rows: [string, string | number][] = [
    ['orders submitted over HTTP (POST /api/orders)', workload.placements.length],
    ['  client retries, same key: at once, after the answer', `${workload.clientRetriesConcurrent}, ${workload.clientRetriesAfterAnswer}`],
    [
      'requests: accepted, replayed, in progress (409, retried)',
      `${r.created ?? 0}, ${r.duplicate ?? 0}, ${r.retry ?? 0} (${tally.requests} requests, ${answers.filter((a) => a.retries > 0).length} clients waited)`,
    ],
    ['messages sent by the producer (payments, status changes)', `${workload.sends.length + 1}`],
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
    ['outbox batches published from the change feed', tally.publishInvocations],
    ['publisher killed between send and mark (lease taken over)', `${tally.publisherKills}, after ${failedMarks} failed marks`],
    ['re-sends dropped by the topic (duplicate detection)', stack.serviceBus.topic('order-events')?.duplicatesDropped ?? 0],
    ...events.map((e): [string, string] => [`OrderAccepted on ${e.subscription}`, `${e.received} received, ${e.distinct} distinct MessageIds`]),
    [
      'deliveries to requestShipment (fulfilment)',
      `${tally.shipmentDeliveries}: ${Object.entries(tally.shipmentOutcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    ],
    ['carrier faults: answers lost after booking, outages', `${carrierFaults.droppedAfterBooking}, ${carrierFaults.unavailable}`],
    ['carrier: bookings, replays, look-ups by key', `${carrier.bookings}, ${carrier.replays}, ${carrier.lookups}`],
  ];
  console.log('\nSummary');
  for (const [label, value] of rows) console.log(`  ${label.padEnd(62)} ${value}`);
  console.log('\nChecks');
  for (const [label, ok] of Object.entries(checks)) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${label}`);
  console.log(Object.values(checks).every(Boolean) ? '\nNo duplicate effect, nothing lost.' : '\nSomething is wrong: see the checks above.');
}
