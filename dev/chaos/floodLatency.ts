import { percentile } from './floodWorkload.js';

/** The valid orders' latencies (send to stored, ms) of one round: the run without the flood and the run with it. */
export interface PairedRound {
  readonly baselineMs: readonly number[];
  readonly floodMs: readonly number[];
}

export interface RoundFigures {
  readonly baseP50: number;
  readonly baseP99: number;
  readonly floodP50: number;
  readonly floodP99: number;
  /** floodP99 over baseP99 (floored, below). */
  readonly ratio: number;
}

export interface FloodLatency {
  readonly rounds: readonly RoundFigures[];
  /** The verdict's figure: the median of the rounds' ratios, so one round disturbed by the machine does not decide it. */
  readonly medianRatio: number;
  /** Every round's samples together, for the record. */
  readonly pooled: RoundFigures;
}

/**
 * Each round's p99 ratio, and their median. A p99 of 200 samples is the third largest: three slow
 * deliveries decide it, so one run without the flood compared with one run with it minutes later
 * measures the machine as much as the flood (a busy shared machine gave 0.5x and 10x). Paired rounds,
 * their halves run back to back, compare like with like; the median of their ratios is the figure.
 * A baseline p99 below `floorMs` (the send tick) counts as `floorMs`: below it, latency is the
 * schedule's, not the consumer's.
 */
export function floodLatency(rounds: readonly PairedRound[], floorMs: number): FloodLatency {
  const figures = rounds.map((r) => figuresOf(r.baselineMs, r.floodMs, floorMs));
  const pooled = figuresOf(
    rounds.flatMap((r) => r.baselineMs),
    rounds.flatMap((r) => r.floodMs),
    floorMs,
  );
  return { rounds: figures, medianRatio: median(figures.map((f) => f.ratio)), pooled };
}

/**
 * Which half of round `round` (from 0) runs first: the baseline, then the flood, then the other way
 * round, and so on. A machine that speeds up or slows down during the run then weighs on both halves.
 */
export function halvesOfRound(round: number): readonly ['baseline', 'flood'] | readonly ['flood', 'baseline'] {
  return round % 2 === 0 ? ['baseline', 'flood'] : ['flood', 'baseline'];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function figuresOf(baselineMs: readonly number[], floodMs: readonly number[], floorMs: number): RoundFigures {
  const [baseP50, baseP99, floodP50, floodP99] = [percentile(baselineMs, 50), percentile(baselineMs, 99), percentile(floodMs, 50), percentile(floodMs, 99)];
  return { baseP50, baseP99, floodP50, floodP99, ratio: floodP99 / Math.max(baseP99, floorMs) };
}
