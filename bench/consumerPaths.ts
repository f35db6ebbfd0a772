// npm run bench: what each consumer path costs, measured side by side in one run: its store round
// trips per message (counted), its rate, and the rate of a bare SDK loop doing the same store work
// (the floor: what any consumer of this design pays); then the documents and bytes each path moves
// and the request units Cosmos DB would charge. Locally everything runs in this process (the Cosmos
// stand-in included), so absolute rates say little about Azure; the ratios are what this is for.
// With COSMOS_ENDPOINT (and COSMOS_KEY, or an Entra ID login) it runs against that account instead,
// in a database of its own, and reports the charges the account answers with.
// `-- --preload 10x` adds a container holding ten times the documents and times each path on it too;
// `-- --costs` prints only the documents and request units table, untimed, in memory.
import { MeteringDocumentStore } from '../dev/store/meteringDocumentStore.js';
import { InMemoryDocumentStore } from '../src/idempotency/index.js';
import { CosmosDocumentStore } from '../src/cosmos/index.js';
import { bareLoops } from './bareLoops.js';
import { openBenchAccount } from './benchAccount.js';
import type { BenchAccount } from './benchAccount.js';
import { concurrency, consumerScenarios, createBenchConsumer, placeOrders, runAll } from './consumerScenarios.js';
import type { ConsumerScenario, Deliver } from './consumerScenarios.js';
import { costPerMessage, publishedPathCosts, renderCostSummary, renderCostTable } from './costTable.js';
import type { PathCost } from './costTable.js';
import { preloadFactorFrom, preloadOrders } from './preload.js';

const messagesPerRound = Number(process.env.BENCH_MESSAGES ?? 600);
const rounds = 3;
const maxPreloadedDocuments = 500_000;

interface Target {
  readonly store: MeteringDocumentStore;
  readonly scenarios: readonly ConsumerScenario[];
}
interface Entry {
  readonly project: number[];
  readonly bare: number[];
  readonly preloaded: number[];
  cost?: PathCost;
  preloadedCost?: PathCost;
}

async function main(): Promise<void> {
  if (process.argv.includes('--costs')) return printCostsOnly();
  const preloadFactor = preloadFactorFrom(process.argv.slice(2));
  const account = await openBenchAccount(process.env);
  try {
    const container = await account.createContainer('orders');
    const target = targetOn(new CosmosDocumentStore(container));
    const bare = bareLoops(container, placeOrders(createBenchConsumer(target.store)));
    const preloaded = preloadFactor === undefined ? undefined : await preloadedTarget(account, preloadFactor);
    const entries = new Map<string, Entry>(target.scenarios.map((s) => [s.name, { project: [], bare: [], preloaded: [] }]));

    const measure = async (on: Target, index: number, name: string): Promise<[number, PathCost]> => {
      const run = await on.scenarios[index]!.prepare(messagesPerRound);
      on.store.reset();
      account.charges.reset();
      const rate = await timed(run);
      const measured = account.source === 'measured' ? account.charges.requestUnits : undefined;
      return [rate, costPerMessage(name, on.store.totals, messagesPerRound, measured)];
    };
    for (let round = 1; round <= rounds; round += 1) {
      for (const [index, { name }] of target.scenarios.entries()) {
        const entry = entries.get(name)!;
        const project = async () => {
          const [rate, cost] = await measure(target, index, name);
          entry.project.push(rate);
          entry.cost = cost;
        };
        const onPreloaded = async () => {
          if (preloaded) {
            const [rate, cost] = await measure(preloaded, index, name);
            entry.preloaded.push(rate);
            entry.preloadedCost = cost;
          }
        };
        const bareRun = async () => {
          entry.bare.push(await timed(await bare[name]!(messagesPerRound)));
        };
        // Which runs first alternates by round, so none always meets a colder process.
        const order = round % 2 === 1 ? [project, bareRun, onPreloaded] : [onPreloaded, bareRun, project];
        for (const step of order) await step();
      }
      process.stderr.write(`round ${round} of ${rounds} done\n`);
    }

    printRates(entries, account.label);
    // The model's table comes from fixed ids (what the docs quote); the timed run's counts are in the rates table above.
    const costs = account.source === 'model' ? await publishedPathCosts() : [...entries.values()].map((e) => e.cost!);
    const source =
      account.source === 'model'
        ? "priced by Microsoft's published charges (dev/store/requestUnitModel.ts; the stand-in answers 1 RU for everything), each path over 3 messages of fixed ids"
        : 'as the account charged them (x-ms-request-charge), over the last round';
    console.log(`\nDocuments, bytes (JSON body, without Cosmos DB's system properties) and request units per message, ${source}:`);
    console.log(renderCostTable(costs, account.source));
    if (preloaded) printPreloaded(entries, preloaded);
  } finally {
    await account.close();
  }
}

/** `-- --costs`: the table docs/deployment.md quotes and README's summary of it, untimed and in memory, as the test computes them. */
async function printCostsOnly(): Promise<void> {
  const costs = await publishedPathCosts();
  console.log(`${renderCostTable(costs, 'model')}\n\n${renderCostSummary(costs)}`);
}

function targetOn(store: CosmosDocumentStore): Target {
  const metering = new MeteringDocumentStore(store);
  return { store: metering, scenarios: consumerScenarios(createBenchConsumer(metering)) };
}

interface Preloaded extends Target {
  readonly documents: number;
  readonly beside: number;
}

async function preloadedTarget(account: BenchAccount, factor: number): Promise<Preloaded> {
  const beside = await documentsTheRunLeaves();
  if (factor * beside > maxPreloadedDocuments) {
    throw new Error(
      `--preload ${factor}x would load ${(factor * beside).toLocaleString('en-US')} documents (at most ${maxPreloadedDocuments.toLocaleString('en-US')}: the stand-in holds about 1.3 KB of heap per document); lower BENCH_MESSAGES (100 loads about 240,000) or the factor`,
    );
  }
  const container = await account.createContainer('orders-preloaded');
  const documents = await preloadOrders(container, factor * beside);
  process.stderr.write(`preloaded ${documents.toLocaleString('en-US')} documents, ${factor}x what this run leaves in the first container\n`);
  return { ...targetOn(new CosmosDocumentStore(container)), documents, beside };
}

/** One message of each path, prepared and delivered, in memory: the documents one message per path leaves, times the run (and its bare loops). */
async function documentsTheRunLeaves(): Promise<number> {
  const store = new MeteringDocumentStore(new InMemoryDocumentStore());
  for (const scenario of consumerScenarios(createBenchConsumer(store))) await (await scenario.prepare(1))(0);
  return store.totals.documentsWritten * messagesPerRound * rounds * 2;
}

async function timed(run: Deliver): Promise<number> {
  const startedAt = performance.now();
  await runAll(messagesPerRound, run);
  return messagesPerRound / ((performance.now() - startedAt) / 1000);
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function printRates(entries: ReadonlyMap<string, Entry>, label: string): void {
  console.log(
    `\nConsumer paths, ${messagesPerRound} messages x ${rounds} interleaved rounds, ${concurrency} in flight, Node ${process.version}, against ${label}`,
  );
  console.log(
    `${'path'.padEnd(38)} ${'round trips'.padStart(11)} ${'msg/s'.padStart(8)} ${'bare SDK msg/s'.padStart(15)} ${'vs bare'.padStart(8)} ${'RU/msg'.padStart(7)}`,
  );
  for (const [name, entry] of entries) {
    const [project, bare] = [median(entry.project), median(entry.bare)];
    console.log(
      `${name.padEnd(38)} ${entry.cost!.trips.toFixed(2).padStart(11)} ${project.toFixed(0).padStart(8)} ${bare.toFixed(0).padStart(15)} ${(project / bare).toFixed(2).padStart(7)}x ${entry.cost!.requestUnits.toFixed(1).padStart(7)}`,
    );
  }
}

function printPreloaded(entries: ReadonlyMap<string, Entry>, preloaded: Preloaded): void {
  // The count beside is what one message per path leaves in memory, times the run: an estimate, not a count.
  console.log(`
The same paths on a container preloaded with ${preloaded.documents.toLocaleString('en-US')} documents (about ${(preloaded.documents / preloaded.beside).toFixed(0)}x the ~${preloaded.beside.toLocaleString('en-US')} the run leaves in the first), rounds interleaved:`);
  console.log(
    `${'path'.padEnd(38)} ${'msg/s'.padStart(8)} ${'msg/s preloaded'.padStart(16)} ${'ratio'.padStart(6)} ${'RU/msg'.padStart(7)} ${'RU/msg preloaded'.padStart(17)}`,
  );
  for (const [name, entry] of entries) {
    const [plainRate, loadedRate] = [median(entry.project), median(entry.preloaded)];
    console.log(
      `${name.padEnd(38)} ${plainRate.toFixed(0).padStart(8)} ${loadedRate.toFixed(0).padStart(16)} ${(loadedRate / plainRate).toFixed(2).padStart(6)} ${entry.cost!.requestUnits.toFixed(1).padStart(7)} ${entry.preloadedCost!.requestUnits.toFixed(1).padStart(17)}`,
    );
  }
}

void main();
