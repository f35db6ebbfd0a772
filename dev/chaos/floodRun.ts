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
import { floodWorkload, percentile } from './floodWorkload.js';
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
 * `npm run chaos -- --flood N`: the valid orders alone, then the same orders' schedule with N invalid
 * and orphan messages mixed in. It passes when the valid orders' p99 latency (send to stored) stays
 * within 2x the run without the flood, every valid order and payment is stored once and nothing
 * valid is dead-lettered, every invalid message is dead-lettered, and what the flood leaves once
 * its orphans are past their horizon is counted, each document with a time-to-live.
 */
export async function runFlood(options: FloodOptions): Promise<boolean> {
  const run = Date.now().toString(36);
  const stack = await startLocalStack({ wellKnownPorts: false, lockDurationMs });
  const leases = mkdtempSync(join(tmpdir(), 'flood-timer-leases-'));
  const fleet = new ConsumerFleet(options.consumers, { ...process.env, ...stack.settings, ...floodSettings, [timerLeaseDirectoryVariable]: leases }, seededRandom(options.seed + 1));
  const stored = new Map<string, number>();
  fleet.onDelivery = ({ fn, messageId, outcome }) => {
    if (fn === 'processOrder' && messageId !== undefined && outcome === 'created' && !stored.has(messageId)) stored.set(messageId, Date.now());
  };
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const sender = producer.createSender('orders');
  const ticks = Math.max(1, Math.round(options.spreadMs / tickMs));
  try {
    fleet.start();
    // Consumer processes take seconds to start: one order stored first, so neither half times a start-up.
    await sendAndTime(sender, floodWorkload({ valid: 1, flood: 0, ticks: 1, seed: options.seed, prefix: `${run}-warm` }), stored, options.timeout);
    const baseline = floodWorkload({ valid: options.valid, flood: 0, ticks, seed: options.seed, prefix: `${run}-base` });
    const baselineMs = await sendAndTime(sender, baseline, stored, options.timeout);
    const flooded = floodWorkload({ valid: options.valid, flood: options.flood, ticks, seed: options.seed, prefix: `${run}-flood` });
    const startedAt = Date.now();
    const floodMs = await sendAndTime(sender, flooded, stored, options.timeout);
    await waitUntil('the queue to drain and every invalid message to be dead-lettered', () => queueDepth(stack) === 0 && deadLetterDepth(stack) >= flooded.invalidMessageIds.length, options.timeout, 250);
    const documents = async () => (await container.items.query<StoredSummary>('SELECT c.id, c.orderId, c.docType, c.state, c.ttl, c.paymentCount, c.amountPaid FROM c').fetchAll()).resources;
    await waitUntil('every orphan past its horizon to be rejected by the sweeper', async () => (await documents()).every((d) => !(d.docType === 'parked' && d.state === 'parked')), options.timeout, 500);
    const horizonMs = Date.now() - startedAt;
    await fleet.stop();
    const all = await documents();
    const deadLettered = await deadLetteredIds(producer);
    return report(options, { baselineMs, floodMs, horizonMs }, flooded, [...baseline.validOrderIds, ...flooded.validOrderIds], all, deadLettered);
  } finally {
    await fleet.stop();
    await sender.close();
    await producer.close();
    cosmos.dispose();
    await stack.close();
    rmSync(leases, { recursive: true, force: true });
  }
}

/** Sends tick by tick and returns each valid order's latency: its send to its `created` outcome. */
async function sendAndTime(sender: ServiceBusSender, workload: FloodWorkload, stored: Map<string, number>, timeoutMs: number): Promise<number[]> {
  const sentAt = new Map<string, number>();
  const began = Date.now();
  for (const [n, tick] of workload.ticks.entries()) {
    const due = began + n * tickMs;
    if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    const batch = [...tick.flood, ...tick.valid];
    const now = Date.now();
    for (const m of tick.valid) sentAt.set(String(m.messageId), now);
    for (let i = 0; i < batch.length; i += 100) await sender.sendMessages(batch.slice(i, i + 100));
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
  for (let from = Long.fromNumber(0); ; ) {
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
  times: { readonly baselineMs: number[]; readonly floodMs: number[]; readonly horizonMs: number },
  flooded: FloodWorkload,
  validOrderIds: readonly string[],
  all: readonly StoredSummary[],
  deadLettered: ReadonlySet<string>,
): boolean {
  const orphans = new Set(flooded.orphanOrderIds);
  const left = all.filter((d) => orphans.has(d.orderId) || d.orderId.startsWith('#rejected'));
  const bound = 2 * flooded.orphanOrderIds.length + flooded.invalidMessageIds.length;
  const immortal = left.filter((d) => !(typeof d.ttl === 'number' && d.ttl > 0));
  const byKind = countBy(left, (d) => `${d.docType ?? '?'}${d.state ? ` ${d.state}` : ''}`);
  const rejectionPartitions = countBy(left.filter((d) => d.orderId.startsWith('#rejected')), (d) => d.orderId);
  const orders = new Map(all.filter((d) => d.docType === 'order').map((d) => [d.orderId, d]));
  const lost = validOrderIds.filter((id) => orders.get(id)?.paymentCount !== 1 || orders.get(id)?.amountPaid !== 25);
  const validDeadLettered = validOrderIds.filter((id) => deadLettered.has(`placed-${id}`) || deadLettered.has(`pay-${id}`));
  const invalidNotDeadLettered = flooded.invalidMessageIds.filter((id) => !deadLettered.has(id));
  const [baseP50, baseP99, floodP50, floodP99] = [percentile(times.baselineMs, 50), percentile(times.baselineMs, 99), percentile(times.floodMs, 50), percentile(times.floodMs, 99)];
  const rows: [string, string | number][] = [
    ['sent', `${validOrderIds.length / 2} valid orders (+ a payment each) alone, then ${validOrderIds.length / 2} with ${options.flood} flood messages, each over ${(options.spreadMs / 1000).toFixed(0)} s`],
    ['flood', `${flooded.invalidMessageIds.length} invalid, ${flooded.orphanOrderIds.length} orphans (payments and status changes for orders that never come)`],
    ['valid orders: p50 / p99 latency without the flood', `${baseP50} ms / ${baseP99} ms`],
    ['valid orders: p50 / p99 latency with the flood', `${floodP50} ms / ${floodP99} ms (${(floodP99 / Math.max(1, baseP99)).toFixed(2)}x)`],
    ['flood documents left after the horizon', `${left.length} (bound ${bound}: 2 per orphan, 1 per invalid), all past the horizon ${(times.horizonMs / 1000).toFixed(1)} s after the flood began`],
    ['  by kind', Object.entries(byKind).map(([k, v]) => `${k} ${v}`).join(', ')],
    ['  rejection partitions used / largest', `${Object.keys(rejectionPartitions).length} / ${Math.max(0, ...Object.values(rejectionPartitions))}`],
    ['  without a time-to-live', immortal.length],
  ];
  console.log('\nFlood figures');
  for (const [label, value] of rows) console.log(`  ${label.padEnd(52)} ${value}`);
  const checks: [string, string[]][] = [
    ['valid p99 within 2x the run without the flood', floodP99 <= 2 * Math.max(baseP99, tickMs) ? [] : [`${floodP99} ms > 2 x ${baseP99} ms`]],
    ['nothing valid lost', lost],
    ['nothing valid dead-lettered', validDeadLettered],
    ['every invalid message dead-lettered', invalidNotDeadLettered],
    ['flood documents bounded, each with a time-to-live', [...(left.length <= bound ? [] : [`${left.length} > ${bound}`]), ...immortal.map((d) => `${d.orderId}/${d.id}`)]],
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
