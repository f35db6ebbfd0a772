// npm run chaos: the local stack under the faults that lose messages in real systems, with the
// expected end state computed from what was sent and audited at the end. Exit code 1 when any
// invariant fails: a double effect, a lost effect, a conflict or hostile message not dead-lettered
// with its reason, a valid message dead-lettered.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusMessage, ServiceBusReceivedMessage } from '@azure/service-bus';
import { Command, InvalidArgumentError } from 'commander';
import Long from 'long';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { durationOption } from '../../src/cli/durationOption.js';
import { localContainer, localDatabase, startLocalStack } from '../local/localStack.js';
import type { LocalStack } from '../local/localStack.js';
import { waitUntil } from '../local/waitUntil.js';
import { writeKinds } from '../../emulators/cosmos-emulator/ambiguousWrites.js';
import { auditChaosRun } from './chaosAudit.js';
import type { AuditFindings } from './chaosAudit.js';
import { chaosWorkload, seededRandom } from './chaosWorkload.js';
import { ConsumerFleet, cosmosTriggerIntervalsVariable, timerLeaseDirectoryVariable } from './consumerFleet.js';
import { auditPublishedEvents } from './eventAudit.js';
import type { EventFindings } from './eventAudit.js';
import { runFlood } from './floodRun.js';
import { auditShipments } from './shipmentAudit.js';
import type { ShipmentFindings } from './shipmentAudit.js';

interface ChaosOptions {
  messages: number;
  consumers: number;
  outage: number;
  outageAfter: number;
  reversed: number;
  killEvery: number;
  ambiguous: number;
  seed: number;
  timeout: number;
  flood?: number;
  valid: number;
  floodSpread: number;
  rounds: number;
}

const whole = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`a whole number from ${min} to ${max}`);
  return n;
};
const share = (value: string) => {
  const match = /^(\d{1,3})%$/.exec(value.trim());
  if (!match || Number(match[1]) > 100) throw new InvalidArgumentError('a share such as 20%');
  return Number(match[1]) / 100;
};

/** The retry layers, shortened so that a run takes minutes; the budget keeps its production value. */
const chaosRetrySettings = {
  DELAYED_RETRY_ENABLED: 'true',
  // The sweeper every 5 s, one consumer process at a time (a shared listener lease), for leftovers older than 10 s.
  PARKED_SWEEP_SCHEDULE: '*/5 * * * * *',
  PARKED_SWEEP_MIN_AGE_SECONDS: '10',
  TRANSIENT_RETRY_IN_INVOCATION_MS: '2000',
  DELAYED_RETRY_FIRST_DELAY_SECONDS: '2',
  DELAYED_RETRY_MAX_DELAY_SECONDS: '8',
  // The outbox sweeper every 5 s for entries pending longer than 10 s (a batch given up during the outage).
  OUTBOX_SWEEP_SCHEDULE: '*/5 * * * * *',
  OUTBOX_SWEEP_MIN_AGE_SECONDS: '10',
  // A killed booking's lease runs out in 6 s; the reconciler runs every 5 s (one process at a time).
  CARRIER_TIMEOUT_MS: '2000',
  SHIPMENT_LEASE_SECONDS: '6',
  SHIPMENT_RECONCILE_SCHEDULE: '*/5 * * * * *',
};
/** The carrier misbehaves throughout: an answer lost after it booked, and outages before it books. */
const carrierFaultEveryMs = 1_500;
/** A killed publisher's lease expires in 5 s instead of the host's 60 s. */
const publisherIntervals = { feedPollDelayMs: 200, leaseAcquireIntervalMs: 1000, leaseRenewIntervalMs: 1500, leaseExpirationIntervalMs: 5000 };
const lockDurationMs = 5_000;

async function main(): Promise<void> {
  const options = new Command('npm run chaos --')
    .description(
      'Competing consumer processes killed at random, producer re-sends, early arrivals, a Cosmos DB outage, conflicts and hostile bodies; then an audit.',
    )
    .option('--messages <n>', 'about this many sends', whole(50, 200_000), 3_000)
    .option('--consumers <n>', 'consumer processes', whole(1, 16), 3)
    .option('--outage <duration>', 'how long Cosmos DB answers 503 to everything', durationOption, 20_000)
    .option(
      '--outage-after <duration>',
      'when the outage starts, counted from every consumer process up; the second half of the sends waits for it',
      durationOption,
      5_000,
    )
    .option('--reversed <share>', 'orders whose payments and status changes are sent first', share, 0.1)
    .option('--kill-every <duration>', 'a consumer is SIGKILLed this often (0s: never)', durationOption, 4_000)
    .option('--ambiguous <share>', 'writes Cosmos DB applies and then loses the answer of (a 408, a 503 or a dropped connection, a third each)', share, 0)
    .option('--seed <n>', 'the same seed, the same workload', whole(0, 2 ** 31), 1)
    .option('--timeout <duration>', 'give up draining after this long', durationOption, 900_000)
    .option('--flood <n>', 'instead: the flood run, this many invalid and orphan messages mixed with --valid orders', whole(1, 200_000))
    .option('--valid <n>', 'valid orders in each half of the flood run', whole(1, 10_000), 200)
    // 120 s: 10,000 flood messages then ask for about 340 deliveries a second, within what a 2-core
    // machine gives the broker, the store and the consumers together (about 550); over 60 s they ask
    // for more, the queue grows for the whole spread, and the run measures that capacity.
    .option('--flood-spread <duration>', 'how long the flood run spreads its sends over', durationOption, 120_000)
    .option(
      '--rounds <n>',
      'paired rounds of the flood run (each without, then with the flood, or the other way round); the verdict is the median of their p99 ratios',
      whole(1, 9),
      3,
    )
    .parse()
    .opts<ChaosOptions>();
  const ok =
    options.flood === undefined
      ? await runChaos(options)
      : await runFlood({
          flood: options.flood,
          valid: options.valid,
          consumers: options.consumers,
          spreadMs: options.floodSpread,
          seed: options.seed,
          timeout: options.timeout,
          rounds: options.rounds,
        });
  process.exitCode = ok ? 0 : 1;
}

async function runChaos(options: ChaosOptions): Promise<boolean> {
  const run = Date.now().toString(36);
  const workload = chaosWorkload({ messages: options.messages, reversedShare: options.reversed, seed: options.seed, run });
  console.log(
    `Chaos run ${run}: ${workload.sends.length + workload.conflicts.length} sends (${workload.counts.orders} orders, ${workload.counts.reversed} reversed), ${options.consumers} consumer processes, a ${options.outage / 1000} s Cosmos outage after ${options.outageAfter / 1000} s, a kill every ${options.killEvery / 1000} s`,
  );
  console.log(
    `Retry layers shortened for the run: ${Object.entries(chaosRetrySettings)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}; queue lock ${lockDurationMs / 1000} s`,
  );
  const stack = await startLocalStack({ wellKnownPorts: false, lockDurationMs });
  const random = seededRandom(options.seed + 1);
  const leases = mkdtempSync(join(tmpdir(), 'chaos-timer-leases-'));
  const fleet = new ConsumerFleet(
    options.consumers,
    {
      ...process.env,
      ...stack.settings,
      ...chaosRetrySettings,
      [timerLeaseDirectoryVariable]: leases,
      [cosmosTriggerIntervalsVariable]: JSON.stringify(publisherIntervals),
    },
    random,
  );
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const startedAt = Date.now();
  const timers: NodeJS.Timeout[] = [];
  let outage = 'not yet';
  let ambiguousAnswers = 0;
  try {
    fleet.start();
    if (options.ambiguous > 0) loseAnswersAfterWrites(stack, options.ambiguous);
    if (options.killEvery > 0) timers.push(setInterval(() => fleet.kill(), options.killEvery));
    // The outage's clock starts once every consumer process is up: on a loaded machine their start-up
    // took longer than `--outage-after` plus the outage, and the outage then met no delivery at all.
    const outageBegun = waitUntil('every consumer process to start', () => fleet.ready >= options.consumers, options.timeout, 100).then(
      () =>
        new Promise<void>((begun) =>
          timers.push(
            setTimeout(() => {
              if (options.outage > 0) stack.cosmos.injectFault({ statusCode: 503, times: Number.MAX_SAFE_INTEGER, forMs: options.outage });
              outage = options.outage > 0 ? 'on' : 'none';
              timers.push(setTimeout(() => (outage = options.outage > 0 ? 'over' : 'none'), options.outage));
              begun();
            }, options.outageAfter),
          ),
        ),
    );
    outageBegun.catch(() => undefined); // awaited below; a fleet that never starts fails there, with its message
    timers.push(setInterval(() => progress(stack, fleet, startedAt, outage), 2_000));
    let carrierFaults = 0;
    timers.push(
      setInterval(() => stack.carrier.inject(carrierFaults++ % 2 === 0 ? { kind: 'drop-after-booking' } : { kind: 'unavailable' }), carrierFaultEveryMs),
    );
    const sender = producer.createSender('orders');
    // Half the sends wait for the outage: it then always meets deliveries, however fast the first half
    // drains (on a fast machine, 250 messages were all done before a 2 s `--outage-after`, and a CI run
    // scheduled no delayed retry at all).
    const held = Math.floor(workload.sends.length / 2);
    await sendAll(sender, workload.sends.slice(0, held));
    await outageBegun;
    await sendAll(sender, workload.sends.slice(held));
    await drained(stack, options.timeout, 0);
    await sendAll(sender, workload.conflicts);
    await drained(stack, options.timeout, workload.rejections.length);
    const drainMs = Date.now() - startedAt;
    // The publisher keeps running (and being killed) until every outbox entry is out.
    await waitUntil('every outbox entry to be published', async () => (await pendingOutbox(container)) === 0, options.timeout, 500);
    const publishMs = Date.now() - startedAt;
    // The fleet keeps booking (and being killed) until every order holds its shipment id.
    await waitUntil('every order to be booked', async () => (await shippedOrders(container)) >= workload.expected.size, options.timeout, 500);
    const shipMs = Date.now() - startedAt;
    for (const t of timers) clearInterval(t);
    await fleet.stop();
    ambiguousAnswers = stack.cosmos.firedFaults().answerLost;
    stack.cosmos.clearFaults();
    progress(stack, fleet, startedAt, outage);
    const deadLettered = await peekDeadLetters(producer);
    const findings = await auditChaosRun(workload, container, deadLettered);
    // fulfilment is requestShipment's; audit is drained here.
    const events = await auditPublishedEvents(workload, container, producer, ['audit']);
    const shipments = await auditShipments(workload, container, stack.carrier);
    return report(workload, stack, fleet, deadLettered.length, drainMs, findings, { ...events, publishMs }, { ...shipments, shipMs }, ambiguousAnswers);
  } finally {
    for (const t of timers) clearInterval(t);
    await fleet.stop();
    await producer.close();
    cosmos.dispose();
    await stack.close();
    rmSync(leases, { recursive: true, force: true });
  }
}

/**
 * For the whole run, this share of the writes Cosmos DB applies and then loses the answer of: the
 * ambiguous write (the caller cannot tell whether it happened), split between a 408, a 503 and a
 * dropped connection.
 */
function loseAnswersAfterWrites(stack: LocalStack, share: number): void {
  const rate = share / 3;
  for (const statusCode of [408, 503, 0])
    stack.cosmos.injectFault({ statusCode, times: Number.MAX_SAFE_INTEGER, kinds: writeKinds, rate, afterApplying: true });
}

async function sendAll(sender: ReturnType<ServiceBusClient['createSender']>, messages: ServiceBusMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 50) await sender.sendMessages(messages.slice(i, i + 50));
}

/** The queue empty (scheduled copies included) and the dead-letter queue at its expected size, for 3 s in a row. */
async function drained(stack: LocalStack, timeoutMs: number, deadLetters: number): Promise<void> {
  let quietSince: number | undefined;
  await waitUntil(
    'the queue to drain',
    () => {
      const quiet = queueDepth(stack) === 0 && deadLetterDepth(stack) >= deadLetters;
      quietSince = quiet ? (quietSince ?? Date.now()) : undefined;
      return quietSince !== undefined && Date.now() - quietSince >= 3_000;
    },
    timeoutMs,
    250,
  );
}

const queueDepth = (stack: LocalStack) => stack.serviceBus.entity('orders')?.messages.size ?? 0;
const deadLetterDepth = (stack: LocalStack) => stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.size ?? 0;

async function peekDeadLetters(client: ServiceBusClient): Promise<ServiceBusReceivedMessage[]> {
  const receiver = client.createReceiver('orders', { subQueueType: 'deadLetter' });
  const all: ServiceBusReceivedMessage[] = [];
  for (let from = Long.fromNumber(0); ;) {
    const page = await receiver.peekMessages(250, { fromSequenceNumber: from });
    if (page.length === 0) break;
    all.push(...page);
    from = (page[page.length - 1]?.sequenceNumber ?? from).add(1);
  }
  await receiver.close();
  return all;
}

function progress(stack: LocalStack, fleet: ConsumerFleet, startedAt: number, outage: string): void {
  const o = fleet.tally.outcomes;
  console.log(
    `  ${String(Math.round((Date.now() - startedAt) / 1000)).padStart(4)} s | deliveries ${fleet.tally.deliveries} | created ${o.created ?? 0} duplicate ${o.duplicate ?? 0} stale ${o.stale ?? 0}` +
      ` parked ${o.parked ?? 0} rescheduled ${o.rescheduled ?? 0} retry ${o.retry ?? 0} conflict ${o.conflict ?? 0} invalid ${o.invalid ?? 0} | kills ${fleet.tally.kills} | outage ${outage} | queue ${queueDepth(stack)} | dead-letter ${deadLetterDepth(stack)}`,
  );
}

async function shippedOrders(container: ReturnType<ReturnType<ReturnType<typeof createCosmosClient>['database']>['container']>): Promise<number> {
  const { resources } = await container.items.query<string>("SELECT VALUE c.id FROM c WHERE c.docType = 'order' AND IS_DEFINED(c.shipmentId)").fetchAll();
  return resources.length;
}

async function pendingOutbox(container: ReturnType<ReturnType<ReturnType<typeof createCosmosClient>['database']>['container']>): Promise<number> {
  const { resources } = await container.items.query<string>("SELECT VALUE c.id FROM c WHERE c.docType = 'outbox' AND c.state = 'pending'").fetchAll();
  return resources.length;
}

function report(
  workload: ReturnType<typeof chaosWorkload>,
  stack: LocalStack,
  fleet: ConsumerFleet,
  deadLettered: number,
  drainMs: number,
  findings: AuditFindings,
  events: EventFindings & { publishMs: number },
  shipments: ShipmentFindings & { shipMs: number },
  ambiguousAnswers: number,
): boolean {
  const o = fleet.tally.outcomes;
  const sent = workload.sends.length + workload.conflicts.length;
  const rows: [string, string | number][] = [
    [
      'sent',
      `${sent} (${workload.counts.orders} orders; ${workload.counts.resendsSameId} re-sends with the same MessageId, ${workload.counts.resendsNewId} with a new one and the same key; ${workload.conflicts.length} conflicts; ${workload.counts.hostile} hostile)`,
    ],
    ['orders sent before their payments and status changes', `${workload.counts.orders - workload.counts.reversed} (reversed: ${workload.counts.reversed})`],
    ['dropped by the broker (duplicate detection)', stack.serviceBus.entity('orders')?.duplicatesDropped ?? 0],
    ['deliveries', fleet.tally.deliveries],
    ['consumer processes killed (SIGKILL) and restarted', fleet.tally.kills],
    ['effects written (created)', o.created ?? 0],
    ['duplicates absorbed by the consumer', o.duplicate ?? 0],
    ['stale status changes', o.stale ?? 0],
    [
      'early arrivals parked / applied with their order',
      `${o.parked ?? 0} deliveries / ${findings.parkedByState.applied ?? 0} items (${
        Object.entries(findings.parkedByState)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none'
      })`,
    ],
    ['delayed retries scheduled (outage)', o.rescheduled ?? 0],
    ['writes applied whose answer was lost (ambiguous)', ambiguousAnswers],
    ['handed back to Service Bus (retry)', o.retry ?? 0],
    ['conflict / invalid deliveries (thrown until dead-lettered)', `${o.conflict ?? 0} / ${o.invalid ?? 0}`],
    ['dead-lettered', `${deadLettered} (expected ${workload.rejections.length})`],
    ['drain time', `${(drainMs / 1000).toFixed(1)} s`],
    [
      'OrderAccepted events: outbox entries published / failed',
      `${events.published} / ${events.failed} for ${workload.expected.size} orders, all out after ${(events.publishMs / 1000).toFixed(1)} s`,
    ],
    ['events received per subscription (distinct MessageIds)', events.perSubscription.map((s) => `${s.subscription} ${s.received} (${s.distinct})`).join(', ')],
    ['publisher re-sends dropped by duplicate detection', stack.serviceBus.topic('order-events')?.duplicatesDropped ?? 0],
    [
      'requestShipment deliveries (fulfilment)',
      `${fleet.tally.shipmentDeliveries}: ${Object.entries(fleet.tally.shipmentOutcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    ],
    [
      'carrier: faults, bookings, replays, look-ups by key',
      `${stack.carrier.stats().faultsInjected}, ${shipments.bookings}, ${shipments.replays}, ${shipments.lookups}; all booked after ${(shipments.shipMs / 1000).toFixed(1)} s`,
    ],
    [
      'shipment records by state',
      Object.entries(shipments.recordsByState)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ],
    ['throughput', `${((fleet.tally.deliveries / drainMs) * 1000).toFixed(0)} deliveries/s, ${((sent / drainMs) * 1000).toFixed(0)} sends/s`],
  ];
  console.log('\nFigures');
  for (const [label, value] of rows) console.log(`  ${label.padEnd(58)} ${value}`);
  const checks: [string, string[]][] = [
    ['no double effect', findings.doubleEffects],
    ['no lost effect', [...findings.lostEffects, ...findings.unexpectedOrders.map((id) => `${id}: an order that was never validly placed`)]],
    ['every conflict and hostile message dead-lettered', findings.rejectionsMissing],
    ['each with its reason recorded', findings.wrongReasons],
    ['nothing valid dead-lettered', findings.validDeadLettered],
    ["every order's OrderAccepted published, once on the audit subscription", events.problems],
    ['every order booked with the carrier exactly once, its shipment id on the order', shipments.problems],
  ];
  console.log('\nInvariants');
  for (const [label, problems] of checks) {
    console.log(`  ${problems.length === 0 ? 'ok  ' : 'FAIL'} ${label}${problems.length === 0 ? '' : `: ${problems.length}`}`);
    for (const p of problems.slice(0, 10)) console.log(`         ${p}`);
  }
  const ok = checks.every(([, problems]) => problems.length === 0);
  console.log(ok ? '\nNo double effect, nothing lost.' : '\nAn invariant failed: see above.');
  return ok;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
