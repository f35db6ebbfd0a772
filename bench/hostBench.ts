// npm run bench -- --host: each consumer path drained through the local Functions host (the compiled
// app, processOrder alone) against a bare SDK loop doing the path's minimal store work, measured from
// outside: messages enqueued on the orders queue as a sender would, then timed from the first delivery
// to the empty queue. Two layouts (the stand-ins in their own process, or all in one), interleaved
// rounds (who goes first alternates), medians and paired ratios; `--profile` profiles both consumers.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { readHostJson } from '../emulators/functions-host/hostSettings.js';
import { loadQueueFile } from '../emulators/servicebus-emulator/index.js';
import { drain } from './hostDrain.js';
import type { DrainResult } from './hostDrain.js';
import { selectPaths } from './hostPaths.js';
import type { HostPath } from './hostPaths.js';
import { hostReport } from './hostReport.js';
import type { PathRounds } from './hostReport.js';
import { profileDirFor, startSide } from './hostSide.js';
import type { Layout, Side } from './hostSide.js';
import { renderLayers, selfTimeByLayer } from './profileLayers.js';
import type { CpuProfile, Layer } from './profileLayers.js';

const appRoot = join(__dirname, '..');

const wholeNumber = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`a whole number from ${min} to ${max}`);
  return n;
};
const layoutsOf = (value: string): Layout[] => {
  if (value === 'both') return ['separate', 'together'];
  if (value === 'separate' || value === 'together') return [value];
  throw new InvalidArgumentError('separate, together or both');
};
const pathsOf = (value: string): HostPath[] => {
  try {
    return selectPaths(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};

const program = new Command('npm run bench -- --host')
  .description('Each consumer path through the local Functions host (processOrder alone) against a bare SDK loop doing its minimal store work.')
  .requiredOption('--host', 'the host bench (without it, npm run bench measures the consumer paths in process)')
  .option('--messages <count>', 'messages per path, side and round', wholeNumber(1, 20_000), 600)
  .option('--rounds <count>', 'interleaved rounds', wholeNumber(1, 20), 3)
  .option('--layout <layout>', 'separate (the stand-ins in their own process), together (all in one), or both', layoutsOf, layoutsOf('both'))
  .option('--paths <names>', "comma list of paths (e.g. 'OrderPlaced, new,PaymentReceived, new'), or all", pathsOf, selectPaths('all'))
  .option('--profile <dir>', 'profile both consumer processes (--cpu-prof) into <dir>/<path>-<layout>[-bare] and print their self time by layer')
  .option('--timeout <seconds>', 'how long one drain may take', wholeNumber(10, 3600), 300)
  .option('--no-build', 'use dist/ as it is instead of compiling the app first')
  .showHelpAfterError();

interface Options {
  messages: number;
  rounds: number;
  layout: Layout[];
  paths: HostPath[];
  profile?: string;
  timeout: number;
  build: boolean;
}

export async function runHostBench(argv: readonly string[]): Promise<boolean> {
  const options = program.parse(argv, { from: 'user' }).opts<Options>();
  if (options.build) execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: appRoot, stdio: 'inherit' });
  const maxDeliveryCount = loadQueueFile().queues.orders?.maxDeliveryCount ?? 10;
  const timeoutMs = options.timeout * 1000;
  const results: PathRounds[] = [];
  const profiles: string[] = [];
  for (const layout of options.layout) {
    for (const path of options.paths) {
      // Both consumers are profiled alike, so what the app spends beyond the bare loop shows layer by layer.
      const profileDir = options.profile ? profileDirFor(options.profile, path.name, layout) : undefined;
      const bareProfileDir = profileDir ? `${profileDir}-bare` : undefined;
      const sides: Side[] = [];
      try {
        sides.push(await startSide('app', layout, profileDir), await startSide('bare', layout, bareProfileDir));
        // Not timed: connections made, code compiled and optimised in both consumers.
        for (const side of sides) await drain(side, path, Math.min(options.messages, 64), maxDeliveryCount, timeoutMs);
        const rounds: { app: DrainResult; bare: DrainResult }[] = [];
        for (let round = 1; round <= options.rounds; round += 1) {
          const halves: Partial<Record<'app' | 'bare', DrainResult>> = {};
          for (const side of round % 2 === 1 ? sides : [...sides].reverse())
            halves[side.name] = await drain(side, path, options.messages, maxDeliveryCount, timeoutMs);
          rounds.push({ app: halves.app!, bare: halves.bare! });
        }
        results.push({ path: path.name, layout, rounds, note: path.note });
        process.stderr.write(`${path.name} (${layout}): done\n`);
      } finally {
        for (const side of sides) await side.close();
      }
      const rounds = results.find((r) => r.path === path.name && r.layout === layout)?.rounds ?? [];
      if (profileDir)
        profiles.push(
          ...profileLines(
            `${path.name} (${layout}), app`,
            profileDir,
            rounds.map((r) => r.app.window),
          ),
        );
      if (bareProfileDir)
        profiles.push(
          ...profileLines(
            `${path.name} (${layout}), bare loop`,
            bareProfileDir,
            rounds.map((r) => r.bare.window),
          ),
        );
    }
  }
  const { lines, ok } = hostReport(
    { messages: options.messages, rounds: options.rounds, maxConcurrentCalls: readHostJson(appRoot).maxConcurrentCalls },
    results,
  );
  for (const line of lines) console.log(line);
  if (profiles.length > 0) {
    console.log('');
    console.log(
      `Self time of each consumer process (the app's, the bare loop's) by layer (${options.profile}; the samples of the timed drains, from the first delivery to the empty queue):`,
    );
    for (const line of profiles) console.log(line);
  }
  return ok;
}

/** The profile's samples taken during the timed drains (first delivery to empty queue), by layer. */
function profileLines(title: string, dir: string, windows: readonly (readonly [number, number])[]): string[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) return [`  ${title}: no .cpuprofile in ${dir}`];
  const totals = new Map<Layer, number>();
  for (const file of files)
    for (const [layer, ms] of selfTimeByLayer(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, windows))
      totals.set(layer, (totals.get(layer) ?? 0) + ms);
  return renderLayers(title, totals);
}
