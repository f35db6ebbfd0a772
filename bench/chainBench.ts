// npm run bench -- --chain: orders through the whole chain as in Azure (POST /api/orders -> outbox ->
// processOrder -> outbox -> topic -> requestShipment -> carrier), every function of the app in the
// local Functions host, beside a bare chain doing the same store and broker work with the SDKs alone.
// Each chain has its own stack (Cosmos DB stand-in, Service Bus emulator, carrier stand-in, all in
// this process) and its own OS process; rounds are paired and alternate which chain goes first.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { Container } from '@azure/cosmos';
import { createCosmosClient } from '../src/cosmos/index.js';
import { localContainer, localDatabase, startLocalStack } from '../dev/local/localStack.js';
import type { LocalStack } from '../dev/local/localStack.js';
import { tallySince } from '../emulators/cosmos-emulator/requestTally.js';
import { startChainProcess } from './chainProcess.js';
import type { ChainProcess } from './chainProcess.js';
import { chainReport } from './chainReport.js';
import type { ChainHalf, ExactlyOnce, PairedRound } from './chainReport.js';
import { emptyPublisherTally, readTimelines, recordDelivery, recordPublish, submitOrders, waitForBookings } from './chainRound.js';
import type { OrderDeliveries, PublisherTally } from './chainRound.js';

const appRoot = join(__dirname, '..');

const wholeNumber = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`a whole number from ${min} to ${max}`);
  return n;
};

const program = new Command('npm run bench -- --chain')
  .description('The whole chain through the local Functions host against a bare SDK chain doing the same store and broker work.')
  .requiredOption('--chain', 'the chain bench (without it, npm run bench measures the consumer paths)')
  .option('--orders <count>', 'orders per chain per round', wholeNumber(1, 10_000), 300)
  .option('--rounds <count>', 'paired rounds', wholeNumber(1, 20), 3)
  .option('--concurrency <clients>', 'clients posting orders at once (closed loop)', wholeNumber(1, 256), 16)
  .option('--timeout <seconds>', 'how long one half of a round may take to book every order', wholeNumber(10, 3600), 300)
  .option('--no-build', 'use dist/ as it is instead of compiling the app first')
  .showHelpAfterError();

interface Chain {
  readonly name: 'app' | 'bare';
  readonly stack: LocalStack;
  readonly process: ChainProcess;
  readonly container: Container;
  readonly orderIds: string[];
  readonly deliveries: Map<string, OrderDeliveries>;
  readonly publisher: PublisherTally;
}

export async function runChainBench(argv: readonly string[]): Promise<boolean> {
  const options = program.parse(argv, { from: 'user' }).opts<{ orders: number; rounds: number; concurrency: number; timeout: number; build: boolean }>();
  if (options.build) execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: appRoot, stdio: 'inherit' });
  const run = Date.now().toString(36);
  const timeoutMs = options.timeout * 1000;
  const chains: Chain[] = [];
  const cosmos = [] as { dispose(): void }[];
  try {
    for (const [name, script] of [
      ['app', 'appChainProcess.ts'],
      ['bare', 'bareChainProcess.ts'],
    ] as const) {
      const stack = await startLocalStack({ wellKnownPorts: false });
      const client = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
      cosmos.push(client);
      const deliveries = new Map<string, OrderDeliveries>();
      const publisher = emptyPublisherTally();
      const started = await startChainProcess(script, stack.settings, 120_000, (line) =>
        line.chain === 'delivery' ? recordDelivery(deliveries, line) : recordPublish(publisher, line),
      ).catch(async (error: unknown) => {
        await stack.close();
        throw error;
      });
      chains.push({ name, stack, process: started, container: client.database(localDatabase).container(localContainer), orderIds: [], deliveries, publisher });
    }
    const half = async (chain: Chain, label: string, count: number): Promise<ChainHalf> => {
      const orderIds = Array.from({ length: count }, (_, i) => `${run}-${chain.name}-${label}-${i}`);
      chain.orderIds.push(...orderIds);
      const before = {
        requests: chain.stack.cosmos.requests(),
        publisher: { ...chain.publisher },
        chainCpuMs: chain.process.cpuMs(),
        benchCpu: process.cpuUsage(),
        at: performance.now(),
      };
      const { sentAt, refused } = await submitOrders(chain.process.url, orderIds, options.concurrency);
      await waitForBookings(chain.stack.carrier, chain.orderIds.length, timeoutMs);
      const wallMs = performance.now() - before.at;
      // What each chain does after its last booking (marks, the change feed's last pages) ends before the other starts, and is counted.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const requests = tallySince(before.requests, chain.stack.cosmos.requests());
      const benchCpu = process.cpuUsage(before.benchCpu);
      const cpu = {
        chainMs: (chain.process.cpuMs() ?? Number.NaN) - (before.chainCpuMs ?? Number.NaN),
        benchMs: (benchCpu.user + benchCpu.system) / 1000,
        wallMs,
      };
      const publisher = {
        invocations: chain.publisher.invocations - before.publisher.invocations,
        documents: chain.publisher.documents - before.publisher.documents,
        entries: chain.publisher.entries - before.publisher.entries,
        busyMs: chain.publisher.busyMs - before.publisher.busyMs,
      };
      const timelines = await readTimelines(chain.container, sentAt, chain.deliveries, 30_000);
      return { timelines, refused, requests, cpu, publisher };
    };
    // Not measured: connections made, code compiled, the change feed's lease held, in both processes.
    for (const chain of chains) await half(chain, 'warm', Math.min(options.orders, 2 * options.concurrency));
    const rounds: PairedRound[] = [];
    for (let round = 1; round <= options.rounds; round += 1) {
      const order = round % 2 === 1 ? chains : [...chains].reverse();
      const halves: Partial<Record<'app' | 'bare', ChainHalf>> = {};
      for (const chain of order) halves[chain.name] = await half(chain, `r${round}`, options.orders);
      rounds.push({ app: halves.app as ChainHalf, bare: halves.bare as ChainHalf });
      process.stderr.write(`round ${round} of ${options.rounds} done\n`);
    }
    const checks = chains.map((c) => exactlyOnce(c));
    const { lines, ok } = chainReport(options, rounds, checks);
    for (const line of lines) console.log(line);
    return ok;
  } finally {
    for (const chain of chains) await chain.process.stop();
    for (const client of cosmos) client.dispose();
    for (const chain of chains) await chain.stack.close();
  }
}

/** Every order of the run (warm-up included) booked once at this chain's carrier, and nothing else booked. */
function exactlyOnce(chain: Chain): ExactlyOnce {
  const perOrder = new Map<string, number>();
  for (const booking of chain.stack.carrier.bookings()) perOrder.set(booking.orderReference, (perOrder.get(booking.orderReference) ?? 0) + 1);
  const notOnce = chain.orderIds.filter((id) => perOrder.get(id) !== 1);
  const count = (fn: 'processOrder' | 'requestShipment') => chain.orderIds.reduce((n, id) => n + (chain.deliveries.get(id)?.[fn] ?? 0), 0);
  return {
    chain: chain.name,
    orders: chain.orderIds.length,
    bookings: chain.stack.carrier.stats().bookings,
    notOnce,
    deliveries: { processOrder: count('processOrder'), requestShipment: count('requestShipment') },
  };
}
