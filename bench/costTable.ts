// What each consumer path costs per message in documents, bytes and request units, and the one
// rendering of it: the bench prints it and docs/deployment.md quotes it (test/docs/capacityTable.test.ts
// keeps the two equal).
import { MeteringDocumentStore } from '../dev/store/meteringDocumentStore.js';
import type { StoreTally } from '../dev/store/meteringDocumentStore.js';
import { InMemoryDocumentStore } from '../src/idempotency/index.js';
import { consumerScenarios, createBenchConsumer, runAll, sequentialIds } from './consumerScenarios.js';
import type { ConsumerScenario } from './consumerScenarios.js';

export interface PathCost {
  readonly name: string;
  readonly trips: number;
  readonly documentsWritten: number;
  readonly bytesWritten: number;
  readonly documentsRead: number;
  readonly bytesRead: number;
  readonly requestUnits: number;
}

/** Where the request units came from: the published model, or a real account's response headers. */
export type ChargeSource = 'model' | 'measured';

export function costPerMessage(name: string, tally: StoreTally, messages: number, measuredRequestUnits?: number): PathCost {
  const per = (value: number) => value / messages;
  return {
    name,
    trips: per(tally.trips),
    documentsWritten: per(tally.documentsWritten),
    bytesWritten: per(tally.bytesWritten),
    documentsRead: per(tally.documentsRead),
    bytesRead: per(tally.bytesRead),
    requestUnits: per(measuredRequestUnits ?? tally.modelRequestUnits),
  };
}

/** Each path once over `messages` messages, untimed: what the docs' table is computed from. */
export async function measurePathCosts(scenarios: readonly ConsumerScenario[], store: MeteringDocumentStore, messages: number): Promise<PathCost[]> {
  const costs: PathCost[] = [];
  for (const scenario of scenarios) {
    const deliver = await scenario.prepare(messages);
    store.reset();
    await runAll(messages, deliver);
    costs.push(costPerMessage(scenario.name, store.totals, messages));
  }
  return costs;
}

/** The table the docs quote: every path over 3 messages of fixed ids, in memory, priced by the model. */
export async function publishedPathCosts(): Promise<PathCost[]> {
  const store = new MeteringDocumentStore(new InMemoryDocumentStore());
  return measurePathCosts(consumerScenarios(createBenchConsumer(store), sequentialIds()), store, 3);
}

export function renderCostTable(costs: readonly PathCost[], source: ChargeSource): string {
  const ru = source === 'model' ? 'RU (published model)' : 'RU (x-ms-request-charge)';
  const rows = costs.map(
    (c) =>
      `| ${c.name} | ${count(c.trips)} | ${count(c.documentsWritten)} (${bytes(c.bytesWritten)}) | ${count(c.documentsRead)} (${bytes(c.bytesRead)}) | ${c.requestUnits.toFixed(1)} |`,
  );
  return [`| Path, per message | Round trips | Documents written (bytes) | Documents read (bytes) | ${ru} |`, '|---|---|---|---|---|', ...rows].join('\n');
}

/** The README's one-line version. */
export function renderCostSummary(costs: readonly PathCost[]): string {
  const of = (name: string) => (costs.find((c) => c.name === name)?.requestUnits ?? Number.NaN).toFixed(1);
  return `a new order ${of('OrderPlaced, new')} RU, a redelivered duplicate ${of('OrderPlaced, duplicate (redelivered)')}, a payment ${of('PaymentReceived, new')}, a parked early payment ${of('PaymentReceived, early (parked)')}`;
}

/** A count stays whole unless the path's messages differ (then its mean); request units to one place. */
function count(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function bytes(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
