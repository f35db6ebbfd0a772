import type { RequestTally } from '../emulators/cosmos-emulator/requestTally.js';
import type { OrderTimeline, PublisherTally } from './chainRound.js';

/** One chain's half of a round. */
export interface ChainHalf {
  readonly timelines: readonly OrderTimeline[];
  readonly refused: Readonly<Record<string, number>>;
  /** The requests its Cosmos DB stand-in received meanwhile (the chain's process only: the bench reads after counting). */
  readonly requests: RequestTally;
  /**
   * CPU used by the chain's process and by the bench's (the stand-ins and the clients), and the wall
   * time, from the first request to the last booking; the CPU counts the settling pause after it too.
   */
  readonly cpu: { readonly chainMs: number; readonly benchMs: number; readonly wallMs: number };
  readonly publisher: PublisherTally;
}

export interface PairedRound {
  readonly app: ChainHalf;
  readonly bare: ChainHalf;
}

export interface ExactlyOnce {
  readonly chain: 'app' | 'bare';
  readonly orders: number;
  readonly bookings: number;
  /** Orders of the run booked other than once (none, or twice and more). */
  readonly notOnce: readonly string[];
  /** Deliveries of OrderPlaced and of OrderAccepted, over all orders (1 each per order when nothing was redelivered). */
  readonly deliveries: { readonly processOrder: number; readonly requestShipment: number };
}

export interface ChainBenchSetup {
  readonly orders: number;
  readonly rounds: number;
  readonly concurrency: number;
}

/** The stages of the chain, each from one timestamp of the order's timeline to the next. */
const stages: readonly [string, keyof OrderTimeline, keyof OrderTimeline][] = [
  ['request -> accepted (submitOrder answers)', 'sentAt', 'acceptedAt'],
  ['accepted -> OrderPlaced enqueued (outbox)', 'acceptedAt', 'placedEnqueuedAt'],
  ['enqueued -> order stored (processOrder)', 'placedEnqueuedAt', 'storedAt'],
  ['order stored -> OrderAccepted enqueued (outbox)', 'storedAt', 'acceptedEnqueuedAt'],
  ['enqueued -> booked (requestShipment)', 'acceptedEnqueuedAt', 'bookedAt'],
  ['request -> order stored', 'sentAt', 'storedAt'],
  ['request -> booked (end to end)', 'sentAt', 'bookedAt'],
];

/** Orders booked per second: from the first request sent to the last booking stored. */
export function ordersPerSecond(half: ChainHalf): number {
  const first = Math.min(...half.timelines.map((t) => t.sentAt));
  const last = Math.max(...half.timelines.map((t) => t.bookedAt));
  return half.timelines.length / Math.max(0.001, (last - first) / 1000);
}

/** The nearest-rank percentile (p in 0..100) of whole milliseconds; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0);
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? 0 : sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

const latencyRatio = (apps: readonly ChainHalf[], bares: readonly ChainHalf[], p: number) =>
  (percentile(latencies(apps, 'sentAt', 'bookedAt'), p) / Math.max(1, percentile(latencies(bares, 'sentAt', 'bookedAt'), p))).toFixed(2);

const latencies = (halves: readonly ChainHalf[], from: keyof OrderTimeline, to: keyof OrderTimeline) =>
  halves.flatMap((h) => h.timelines.map((t) => (t[to] as number) - (t[from] as number)));

/** Requests per order by container and kind, the chains side by side, and their totals. */
function requestRows(apps: readonly ChainHalf[], bares: readonly ChainHalf[]): string[] {
  const perOrder = (halves: readonly ChainHalf[]) => {
    const orders = halves.reduce((n, h) => n + h.timelines.length, 0);
    const sums: Record<string, number> = {};
    for (const h of halves) for (const [key, n] of Object.entries(h.requests)) sums[key] = (sums[key] ?? 0) + n;
    return Object.fromEntries(Object.entries(sums).map(([key, n]) => [key, n / Math.max(1, orders)]));
  };
  const [app, bare] = [perOrder(apps), perOrder(bares)];
  const keys = [...new Set([...Object.keys(app), ...Object.keys(bare)])].sort();
  const total = (t: Record<string, number>) => Object.values(t).reduce((n, v) => n + v, 0);
  const row = (label: string, a: number, b: number) => `  ${label.padEnd(48)} ${a.toFixed(2).padStart(8)} ${b.toFixed(2).padStart(9)}`;
  return [
    `  ${''.padEnd(48)} ${'app'.padStart(8)} ${'bare'.padStart(9)}`,
    ...keys.map((key) => row(key, app[key] ?? 0, bare[key] ?? 0)),
    row('total', total(app), total(bare)),
  ];
}

function cpuRows(apps: readonly ChainHalf[], bares: readonly ChainHalf[]): string[] {
  const orders = (halves: readonly ChainHalf[]) =>
    Math.max(
      1,
      halves.reduce((n, h) => n + h.timelines.length, 0),
    );
  const sum = (halves: readonly ChainHalf[], value: (h: ChainHalf) => number) => halves.reduce((n, h) => n + value(h), 0);
  const perOrder = (halves: readonly ChainHalf[], value: (h: ChainHalf) => number) => sum(halves, value) / orders(halves);
  const busy = (halves: readonly ChainHalf[], value: (h: ChainHalf) => number) =>
    `${(
      (100 * sum(halves, value)) /
      Math.max(
        1,
        sum(halves, (h) => h.cpu.wallMs),
      )
    ).toFixed(0)} %`;
  const row = (label: string, app: string, bare: string) => `  ${label.padEnd(48)} ${app.padStart(14)} ${bare.padStart(14)}`;
  const both = (value: (h: ChainHalf) => number) =>
    [apps, bares].map((halves) => `${perOrder(halves, value).toFixed(2)} (${busy(halves, value)})`) as [string, string];
  const invocations = sum(apps, (h) => h.publisher.invocations);
  return [
    row('', 'app', 'bare'),
    row('chain process CPU (busy)', ...both((h) => h.cpu.chainMs)),
    row('bench process CPU: stand-ins, clients (busy)', ...both((h) => h.cpu.benchMs)),
    row('outbox publisher time (busy)', ...both((h) => h.publisher.busyMs)),
    row('publisher invocations per order', (invocations / orders(apps)).toFixed(2), '-'),
    row(
      'change-feed documents, entries per invocation',
      `${(sum(apps, (h) => h.publisher.documents) / Math.max(1, invocations)).toFixed(1)}, ${(sum(apps, (h) => h.publisher.entries) / Math.max(1, invocations)).toFixed(1)}`,
      '-',
    ),
  ];
}

/** The report's lines; the verdict is whether every order of both chains was booked exactly once. */
export function chainReport(setup: ChainBenchSetup, rounds: readonly PairedRound[], checks: readonly ExactlyOnce[]): { lines: string[]; ok: boolean } {
  const apps = rounds.map((r) => r.app);
  const bares = rounds.map((r) => r.bare);
  const ratios = rounds.map((r) => ordersPerSecond(r.app) / ordersPerSecond(r.bare));
  const endToEnd = (halves: readonly ChainHalf[]) => latencies(halves, 'sentAt', 'bookedAt');
  const row = (label: string, halves: readonly ChainHalf[]) =>
    `  ${label.padEnd(34)} ${median(halves.map(ordersPerSecond)).toFixed(1).padStart(9)} ${String(percentile(endToEnd(halves), 50)).padStart(8)} ${String(percentile(endToEnd(halves), 99)).padStart(8)}`;
  const lines = [
    '',
    'Chain: POST /api/orders -> outbox -> processOrder -> outbox -> topic -> requestShipment -> carrier',
    `${setup.orders} orders x ${rounds.length} interleaved rounds, closed loop at the intake (${setup.concurrency} clients), Node ${process.version}; each chain in its own process, the stand-ins in the bench's`,
    `  ${'chain'.padEnd(34)} ${'orders/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`,
    row('app (local Functions host)', apps),
    row('bare SDK chain', bares),
    `  ${'ratio app / bare (paired, median)'.padEnd(34)} ${median(ratios).toFixed(2).padStart(8)}x`,
    `  latency app / bare: p50 ${latencyRatio(apps, bares, 50)}x, p99 ${latencyRatio(apps, bares, 99)}x`,
    ...rounds.map(
      (r, i) =>
        `  round ${i + 1}: app ${ordersPerSecond(r.app).toFixed(1)} orders/s, bare ${ordersPerSecond(r.bare).toFixed(1)} orders/s (${(ratios[i] ?? 0).toFixed(2)}x)`,
    ),
    '',
    "Where the time goes (ms per order: the client's clock, the documents' timestamps, the broker's enqueued times)",
    `  ${'stage'.padEnd(48)} ${'app p50'.padStart(8)} ${'app p99'.padStart(8)} ${'bare p50'.padStart(9)} ${'bare p99'.padStart(9)}`,
    ...stages.map(([label, from, to]) => {
      const [a, b] = [latencies(apps, from, to), latencies(bares, from, to)];
      return `  ${label.padEnd(48)} ${String(percentile(a, 50)).padStart(8)} ${String(percentile(a, 99)).padStart(8)} ${String(percentile(b, 50)).padStart(9)} ${String(percentile(b, 99)).padStart(9)}`;
    }),
    '',
    'Store requests per order (at the Cosmos DB stand-in: container, kind)',
    ...requestRows(apps, bares),
    '',
    'CPU and the outbox publisher (ms per order; busy: share of the time from first request to last booking)',
    ...cpuRows(apps, bares),
    '',
    'Exactly once',
  ];
  const refusals = (halves: readonly ChainHalf[]) => halves.reduce((n, h) => n + Object.values(h.refused).reduce((m, v) => m + v, 0), 0);
  let ok = true;
  for (const check of checks) {
    const refused = refusals(check.chain === 'app' ? apps : bares);
    const good = check.notOnce.length === 0 && check.bookings === check.orders && refused === 0;
    ok &&= good;
    lines.push(
      `  ${good ? 'ok  ' : 'FAIL'} ${check.chain}: ${check.orders} orders, ${check.bookings} bookings at the carrier, ${check.notOnce.length} not booked exactly once, ${refused} requests not answered 202`,
    );
    lines.push(
      `       ${check.chain}: deliveries per order: processOrder ${(check.deliveries.processOrder / check.orders).toFixed(2)}, requestShipment ${(check.deliveries.requestShipment / check.orders).toFixed(2)}`,
    );
    for (const orderId of check.notOnce.slice(0, 10)) lines.push(`         ${orderId}`);
  }
  return { lines, ok };
}
