import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusSender } from '@azure/service-bus';
import Long from 'long';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { localContainer, localDatabase, startLocalStack } from '../local/localStack.js';
import type { LocalStack } from '../local/localStack.js';
import { waitUntil } from '../local/waitUntil.js';
import { ConsumerFleet, timerLeaseDirectoryVariable } from './consumerFleet.js';
import { floodLatency, halvesOfRound } from './floodLatency.js';
import type { FloodLatency, PairedRound } from './floodLatency.js';
import { floodWorkload } from './floodWorkload.js';
import type { FloodWorkload } from './floodWorkload.js';
import { seededRandom } from './chaosWorkload.js';

export interface FloodOptions {
  readonly flood: number;
  readonly valid: number;
  readonly consumers: number;
  /** How long the sends are spread over (the same schedule with and without the flood). */
  readonly spreadMs: number;
  readonly seed: number;
  readonly timeout: number;
  /** Paired rounds: each a run without the flood and one with it, back to back; the verdict is the median of their p99 ratios. */
  readonly rounds: number;
}

/** Orphans wait 5 s for their order; the sweeper runs every 2 s, one page of 500 a run. */
const floodSettings = {
  DELAYED_RETRY_ENABLED: 'true',
  PARKED_ITEM_HORIZON_SECONDS: '5',
  PARKED_SWEEP_SCHEDULE: '*/2 * * * * *',
  PARKED_SWEEP_MIN_AGE_SECONDS: '2',
  SWEEP_MAX_ITEMS_PER_RUN: '500',
  OUTBOX_SWEEP_SCHEDULE: '*/5 * * * * *',
  OUTBOX_SWEEP_MIN_AGE_SECONDS: '10',
};
const tickMs = 100;
const lockDurationMs = 5_000;
/** What one consumer process takes at once (consumerProcess.ts, maxConcurrentCalls). */
const callsPerConsumer = 8;

interface StoredSummary {
  readonly id: string;
  readonly orderId: string;
  readonly docType?: string;
  readonly state?: string;
  readonly ttl?: number;
  readonly paymentCount?: number;
  readonly amountPaid?: number;
}

/**
 * `npm run chaos -- --flood N`: paired rounds, each the valid orders alone and the same orders'
 * schedule with N invalid and orphan messages mixed in, back to back (alternating which goes first),
 * the stack settled between halves. It passes when the median over the rounds of the valid orders'
 * p99 latency ratio (send to stored, with the flood over without) is within 2x, every valid order and
 * payment is stored once and nothing valid is dead-lettered, every invalid message is dead-lettered,
 * and what the floods leave once their orphans are past their horizon is counted, each document
 * with a time-to-live.
 */
export async function runFlood(options: FloodOptions): Promise<boolean> {
  const run = Date.now().toString(36);
  const stack = await startLocalStack({ wellKnownPorts: false, lockDurationMs });
  const leases = mkdtempSync(join(tmpdir(), 'flood-timer-leases-'));
  const fleet = new ConsumerFleet(
    options.consumers,
    { ...process.env, ...stack.settings, ...floodSettings, [timerLeaseDirectoryVariable]: leases },
    seededRandom(options.seed + 1),
  );
  const stored = new Map<string, number>();
  fleet.onDelivery = ({ fn, messageId, outcome, at }) => {
    if (fn === 'processOrder' && messageId !== undefined && outcome === 'created' && !stored.has(messageId)) stored.set(messageId, at ?? Date.now());
  };
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const sender = producer.createSender('orders');
  const ticks = Math.max(1, Math.round(options.spreadMs / tickMs));
  const documents = async () =>
    (await container.items.query<StoredSummary>('SELECT c.id, c.orderId, c.docType, c.state, c.ttl, c.paymentCount, c.amountPaid FROM c').fetchAll()).resources;
  // One item is enough to say "not yet": the stand-in runs a query once per page over every document,
  // so listing thousands of parked ids every half second kept the driver's process (which also hosts the
  // broker and the store) busy for minutes between halves.
  const stillParked = async () =>
    (await container.items.query<string>("SELECT TOP 1 VALUE c.id FROM c WHERE c.docType = 'parked' AND c.state = 'parked'").fetchAll()).resources;
  const floods: FloodWorkload[] = [];
  // Between halves: the queue empty, every invalid message sent so far dead-lettered, every orphan
  // rejected by the sweeper, so that no half pays for the one before it.
  const settle = async () => {
    const invalid = floods.reduce((n, f) => n + f.invalidMessageIds.length, 0);
    await waitUntil(
      'the queue to drain and every invalid message to be dead-lettered',
      () => queueDepth(stack) === 0 && deadLetterDepth(stack) >= invalid,
      options.timeout,
      250,
    );
    await waitUntil('every orphan past its horizon to be rejected by the sweeper', async () => (await stillParked()).length === 0, options.timeout, 500);
  };
  // One half of a round: its workload sent and timed, then the stack settled.
  const runHalf = async (round: number, half: 'baseline' | 'flood'): Promise<{ latencies: number[]; work: string }> => {
    const workload = floodWorkload({
      valid: options.valid,
      flood: half === 'flood' ? options.flood : 0,
      ticks,
      seed: options.seed + round,
      prefix: `${run}-r${round}-${half === 'flood' ? 'flood' : 'base'}`,
    });
    if (half === 'flood') floods.push(workload);
    validOrderIds.push(...workload.validOrderIds);
    const [deliveriesBefore, startedAt] = [fleet.tally.deliveries, Date.now()];
    const latencies = await sendAndTime(sender, workload, stored, options.timeout);
    // What the fleet got through while the valid orders were timed: a flood that asks for more deliveries a second than that is a queue that grows.
    const [deliveries, seconds] = [fleet.tally.deliveries - deliveriesBefore, (Date.now() - startedAt) / 1000];
    await settle();
    return { latencies, work: `${half} ${deliveries} deliveries in ${seconds.toFixed(1)} s (${(deliveries / seconds).toFixed(0)}/s)` };
  };
  const validOrderIds: string[] = [];
  try {
    fleet.start();
    await warmUp(fleet, options, run, (workload) => sendAndTime(sender, workload, stored, options.timeout));
    const rounds: PairedRound[] = [];
    const startedAt = Date.now();
    for (let round = 0; round < options.rounds; round += 1) {
      const halves = [];
      for (const half of halvesOfRound(round)) halves.push({ half, ...(await runHalf(round, half)) });
      rounds.push({ baselineMs: halves.find((h) => h.half === 'baseline')?.latencies ?? [], floodMs: halves.find((h) => h.half === 'flood')?.latencies ?? [] });
      console.log(`  round ${round + 1} of ${options.rounds}: ${halves.map((h) => h.work).join(', then ')}`);
    }
    const horizonMs = Date.now() - startedAt;
    await fleet.stop();
    const all = await documents();
    const deadLettered = await deadLetteredIds(producer);
    return report(options, floodLatency(rounds, tickMs), horizonMs, floods, validOrderIds, all, deadLettered);
  } finally {
    await fleet.stop();
    await sender.close();
    await producer.close();
    cosmos.dispose();
    await stack.close();
    rmSync(leases, { recursive: true, force: true });
  }
}

/**
 * Every consumer process up, and each past its first deliveries (connections made, code compiled)
 * before anything is timed: two rounds of as many orders as the fleet takes at once. One order alone
 * warmed one process, and the others' first orders then inflated the first baseline's p99.
 */
async function warmUp(fleet: ConsumerFleet, options: FloodOptions, run: string, sendAndWait: (workload: FloodWorkload) => Promise<number[]>): Promise<void> {
  await waitUntil('every consumer process to start', () => fleet.ready >= options.consumers, options.timeout, 100);
  for (const pass of [1, 2])
    await sendAndWait(floodWorkload({ valid: options.consumers * callsPerConsumer, flood: 0, ticks: 1, seed: options.seed, prefix: `${run}-warm${pass}` }));
}

/**
 * Sends tick by tick and returns each valid order's latency: from the send that carried it to its
 * `created` outcome. Each send is timed on its own: a valid message sent after the tick's flood
 * messages is not charged for the producer's time sending them.
 */
async function sendAndTime(sender: ServiceBusSender, workload: FloodWorkload, stored: Map<string, number>, timeoutMs: number): Promise<number[]> {
  const sentAt = new Map<string, number>();
  const began = Date.now();
  for (const [n, tick] of workload.ticks.entries()) {
    const due = began + n * tickMs;
    if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    const batch = [...tick.flood, ...tick.valid];
    for (let i = 0; i < batch.length; i += 100) {
      const chunk = batch.slice(i, i + 100);
      const now = Date.now();
      for (const m of chunk) if (tick.valid.includes(m)) sentAt.set(String(m.messageId), now);
      await sender.sendMessages(chunk);
    }
  }
  const placed = workload.validOrderIds.map((id) => `placed-${id}`);
  await waitUntil('every valid order to be stored', () => placed.every((id) => stored.has(id)), timeoutMs, 100);
  return placed.map((id) => (stored.get(id) ?? 0) - (sentAt.get(id) ?? 0));
}

const queueDepth = (stack: LocalStack) => stack.serviceBus.entity('orders')?.messages.size ?? 0;
const deadLetterDepth = (stack: LocalStack) => stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.size ?? 0;

async function deadLetteredIds(client: ServiceBusClient): Promise<Set<string>> {
  const receiver = client.createReceiver('orders', { subQueueType: 'deadLetter' });
  const ids = new Set<string>();
  for (let from = Long.fromNumber(0); ;) {
    const page = await receiver.peekMessages(250, { fromSequenceNumber: from });
    if (page.length === 0) break;
    for (const m of page) ids.add(String(m.messageId));
    from = (page[page.length - 1]?.sequenceNumber ?? from).add(1);
  }
  await receiver.close();
  return ids;
}

function report(
  options: FloodOptions,
  latency: FloodLatency,
  horizonMs: number,
  floods: readonly FloodWorkload[],
  validOrderIds: readonly string[],
  all: readonly StoredSummary[],
  deadLettered: ReadonlySet<string>,
): boolean {
  const orphanOrderIds = floods.flatMap((f) => f.orphanOrderIds);
  const invalidMessageIds = floods.flatMap((f) => f.invalidMessageIds);
  const orphans = new Set(orphanOrderIds);
  const left = all.filter((d) => orphans.has(d.orderId) || d.orderId.startsWith('#rejected'));
  const bound = 2 * orphanOrderIds.length + invalidMessageIds.length;
  const immortal = left.filter((d) => !(typeof d.ttl === 'number' && d.ttl > 0));
  const byKind = countBy(left, (d) => `${d.docType ?? '?'}${d.state ? ` ${d.state}` : ''}`);
  const rejectionPartitions = countBy(
    left.filter((d) => d.orderId.startsWith('#rejected')),
    (d) => d.orderId,
  );
  const orders = new Map(all.filter((d) => d.docType === 'order').map((d) => [d.orderId, d]));
  const lost = validOrderIds.filter((id) => orders.get(id)?.paymentCount !== 1 || orders.get(id)?.amountPaid !== 25);
  const validDeadLettered = validOrderIds.filter((id) => deadLettered.has(`placed-${id}`) || deadLettered.has(`pay-${id}`));
  const invalidNotDeadLettered = invalidMessageIds.filter((id) => !deadLettered.has(id));
  const { pooled } = latency;
  const rows: [string, string | number][] = [
    [
      'sent',
      `${options.rounds} paired rounds: ${options.valid} valid orders (+ a payment each) alone, and ${options.valid} with ${options.flood} flood messages, each over ${(options.spreadMs / 1000).toFixed(0)} s`,
    ],
    ['flood', `${invalidMessageIds.length} invalid, ${orphanOrderIds.length} orphans (payments and status changes for orders that never come)`],
    ...latency.rounds.map((r, i): [string, string] => [
      `round ${i + 1}: p50 / p99 without, then with the flood`,
      `${r.baseP50} / ${r.baseP99} ms, ${r.floodP50} / ${r.floodP99} ms (${r.ratio.toFixed(2)}x)`,
    ]),
    ['valid orders: p50 / p99 latency without the flood', `${pooled.baseP50} ms / ${pooled.baseP99} ms`],
    ['valid orders: p50 / p99 latency with the flood', `${pooled.floodP50} ms / ${pooled.floodP99} ms (${pooled.ratio.toFixed(2)}x)`],
    ['p99 ratio: median of the rounds', `${latency.medianRatio.toFixed(2)}x`],
    [
      'flood documents left after the horizon',
      `${left.length} (bound ${bound}: 2 per orphan, 1 per invalid), all past the horizon ${(horizonMs / 1000).toFixed(1)} s after the first round began`,
    ],
    [
      '  by kind',
      Object.entries(byKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ],
    ['  rejection partitions used / largest', `${Object.keys(rejectionPartitions).length} / ${Math.max(0, ...Object.values(rejectionPartitions))}`],
    ['  without a time-to-live', immortal.length],
  ];
  console.log('\nFlood figures');
  for (const [label, value] of rows) console.log(`  ${label.padEnd(52)} ${value}`);
  const checks: [string, string[]][] = [
    [
      'valid p99 within 2x the run without the flood',
      latency.medianRatio <= 2 ? [] : [`median of the rounds' p99 ratios ${latency.medianRatio.toFixed(2)}x > 2x`],
    ],
    ['nothing valid lost', lost],
    ['nothing valid dead-lettered', validDeadLettered],
    ['every invalid message dead-lettered', invalidNotDeadLettered],
    [
      'flood documents bounded, each with a time-to-live',
      [...(left.length <= bound ? [] : [`${left.length} > ${bound}`]), ...immortal.map((d) => `${d.orderId}/${d.id}`)],
    ],
  ];
  console.log('\nInvariants');
  for (const [label, problems] of checks) {
    console.log(`  ${problems.length === 0 ? 'ok  ' : 'FAIL'} ${label}${problems.length === 0 ? '' : `: ${problems.length}`}`);
    for (const p of problems.slice(0, 10)) console.log(`         ${p}`);
  }
  return checks.every(([, problems]) => problems.length === 0);
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}
