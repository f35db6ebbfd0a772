import { parseArgs } from 'node:util';
import { explorationProperties } from '../../test/explore/properties.js';

/**
 * npm run explore -- --runs N [--seed S] [--property NAME] [--tries K] [--chunk C]
 *
 * Long runs of the exploration properties on seeds nobody chose. The runs go in chunks of C, each
 * chunk its own seed (printed, so any counterexample replays with `--seed <it> --runs C`), with runs
 * per second after each. `--tries K`: K independent tries of up to N runs each, on random seeds,
 * stopping each at its first counterexample: the detection rate and the median runs to detection
 * (for a property with a reintroduced defect).
 */
interface Options {
  readonly runs: number;
  readonly seed: number;
  readonly property: string;
  readonly tries: number;
  readonly chunk: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000' },
      seed: { type: 'string' },
      property: { type: 'string', default: 'order-flows' },
      tries: { type: 'string' },
      chunk: { type: 'string', default: '1000' },
    },
  });
  const number = (name: string, text: string | undefined, fallback: number): number => {
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isSafeInteger(value) || value < (name === 'seed' ? -(2 ** 31) : 1)) throw new RangeError(`--${name} ${text}: expected a positive integer`);
    return value;
  };
  if (!(values.property in explorationProperties)) {
    throw new RangeError(`--property ${values.property}: expected one of ${Object.keys(explorationProperties).join(', ')}`);
  }
  return {
    runs: number('runs', values.runs, 1000),
    seed: number('seed', values.seed, Date.now() ^ (Math.random() * 2 ** 31)),
    property: values.property,
    tries: values.tries === undefined ? 0 : number('tries', values.tries, 0),
    chunk: number('chunk', values.chunk, 1000),
  };
}

const rate = (runs: number, ms: number): string => `${((runs * 1000) / Math.max(ms, 1)).toFixed(1)} runs/s`;

/** Up to `runs` runs in chunks, each on its own seed; stops at the first counterexample. */
async function explore(o: Options): Promise<boolean> {
  const property = explorationProperties[o.property]!;
  console.log(`${o.property}: ${property.description}\nup to ${o.runs} runs from seed ${o.seed}, in chunks of ${o.chunk}`);
  const startedAt = performance.now();
  let done = 0;
  for (let chunk = 0; done < o.runs; chunk += 1) {
    // Far apart, so that the chunks of runs from seeds S and S + 1 do not overlap.
    const seed = (o.seed + chunk * 1_000_003) | 0;
    const numRuns = Math.min(o.chunk, o.runs - done);
    const result = await property.check({ seed, numRuns });
    done += result.numRuns;
    const elapsedMs = performance.now() - startedAt;
    if (result.failed) {
      console.log(result.report);
      console.log(
        `\nCOUNTEREXAMPLE after ${done} runs in ${(elapsedMs / 1000).toFixed(1)} s (${rate(done, elapsedMs)}); replay: npm run explore -- --property ${o.property} --seed ${seed} --runs ${numRuns}`,
      );
      return true;
    }
    console.log(`${done} runs, ${(elapsedMs / 1000).toFixed(1)} s, ${rate(done, elapsedMs)}; chunk seed ${seed}: no counterexample`);
  }
  return false;
}

/** K tries on random seeds, each up to `runs` runs, without shrinking: how often, and how soon, a counterexample comes. */
async function measure(o: Options): Promise<void> {
  const property = explorationProperties[o.property]!;
  const found: number[] = [];
  const startedAt = performance.now();
  let total = 0;
  for (let t = 0; t < o.tries; t += 1) {
    const seed = (Math.random() * 2 ** 31) | 0;
    const tryStartedAt = performance.now();
    const result = await property.check({ seed, numRuns: o.runs, endOnFailure: true });
    total += result.numRuns;
    const ms = performance.now() - tryStartedAt;
    if (result.failed) found.push(result.numRuns);
    console.log(
      `try ${t + 1}: seed ${seed}: ${result.failed ? `counterexample at run ${result.numRuns}` : `none in ${result.numRuns} runs`} (${(ms / 1000).toFixed(2)} s)`,
    );
  }
  const sorted = [...found].sort((a, b) => a - b);
  const median =
    sorted.length === 0
      ? undefined
      : sorted.length % 2 === 1
        ? sorted[(sorted.length - 1) / 2]
        : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  const ms = performance.now() - startedAt;
  console.log(
    `\n${o.property}: found in ${found.length} of ${o.tries} tries (up to ${o.runs} runs each); median runs to detection ${median ?? 'n/a'}; ${total} runs in ${(ms / 1000).toFixed(1)} s (${rate(total, ms)})`,
  );
}

async function main(): Promise<void> {
  const o = options();
  if (o.tries > 0) return measure(o);
  const found = await explore(o);
  const expected = explorationProperties[o.property]!.expectsCounterexample;
  process.exitCode = found === expected ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 2;
});
