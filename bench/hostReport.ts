// What `npm run bench -- --host` prints: per path and layout, the app's and the bare loop's drain rates
// (medians of the rounds), their ratio and the paired ratio (median of each round's app / bare, with
// every round's), the consumer process's CPU per message, then whether every message had its effect once.
import { median } from './chainReport.js';
import type { DrainResult } from './hostDrain.js';
import type { Layout } from './hostSide.js';

/** One path in one layout: its rounds, the app's and the bare loop's drain in each. */
export interface PathRounds {
  readonly path: string;
  readonly layout: Layout;
  readonly rounds: readonly { readonly app: DrainResult; readonly bare: DrainResult }[];
  readonly note?: string;
}

export const perSecond = (r: DrainResult): number => r.messages / Math.max(0.001, r.ms / 1000);
const cpuPerMessage = (r: DrainResult): number => r.cpuMs / r.messages;
const x = (ratio: number): string => `${ratio.toFixed(2)}x`;

export function hostReport(
  options: { messages: number; rounds: number; maxConcurrentCalls: number },
  results: readonly PathRounds[],
): { lines: string[]; ok: boolean } {
  const lines = [
    `Consumer paths through the local Functions host (processOrder alone, maxConcurrentCalls ${options.maxConcurrentCalls}) against a bare SDK loop,`,
    `${options.messages} messages x ${options.rounds} interleaved rounds per path and layout`,
    'separate: the stand-ins in one process, the consumer in another; together: all in one process. Each side has its own stack.',
    "Timed from the consumer's first delivery to the empty orders queue; msg/s are medians of the rounds, paired = median of each round's app / bare.",
    '',
    `  ${'path'.padEnd(42)} ${'layout'.padEnd(9)} ${'app msg/s'.padStart(10)} ${'bare msg/s'.padStart(10)} ${'app/bare'.padStart(8)} ${'paired'.padStart(7)}  ${'CPU ms/msg app'.padStart(14)} ${'bare'.padStart(6)} ${'ratio'.padStart(6)}`,
  ];
  for (const { path, layout, rounds } of results) {
    const app = median(rounds.map((r) => perSecond(r.app)));
    const bare = median(rounds.map((r) => perSecond(r.bare)));
    const paired = rounds.map((r) => perSecond(r.app) / perSecond(r.bare));
    const appCpu = median(rounds.map((r) => cpuPerMessage(r.app)));
    const bareCpu = median(rounds.map((r) => cpuPerMessage(r.bare)));
    lines.push(
      `  ${path.padEnd(42)} ${layout.padEnd(9)} ${app.toFixed(1).padStart(10)} ${bare.toFixed(1).padStart(10)} ${x(app / bare).padStart(8)} ${x(median(paired)).padStart(7)}  ${appCpu.toFixed(2).padStart(14)} ${bareCpu.toFixed(2).padStart(6)} ${x(appCpu / bareCpu).padStart(6)}`,
      `    rounds (app / bare): ${paired.map((p) => p.toFixed(2)).join(', ')}`,
    );
  }
  const notes = [...new Set(results.flatMap((r) => (r.note ? [`  ${r.path}: ${r.note}.`] : [])))];
  if (notes.length > 0) lines.push('', 'What the bare loop leaves out:', ...notes);
  lines.push('', 'Exactly once (each order read back after each drain; deliveries and dead letters counted):');
  let ok = true;
  for (const { path, layout, rounds } of results) {
    for (const side of ['app', 'bare'] as const) {
      const drains = rounds.map((r) => r[side]);
      const problems = drains.flatMap((d) => d.problems);
      const sum = (f: (d: DrainResult) => number) => drains.reduce((n, d) => n + f(d), 0);
      ok &&= problems.length === 0;
      lines.push(
        `  ${problems.length === 0 ? 'ok  ' : 'FAIL'} ${side} ${layout} ${path}: ${sum((d) => d.messages)} messages, ${sum((d) => d.deliveries)} deliveries, ` +
          `${sum((d) => d.deadLettered)} dead-lettered, ${problems.length} problems${problems.length > 0 ? `: ${problems.slice(0, 5).join('; ')}` : ''}`,
      );
    }
  }
  return { lines, ok };
}
