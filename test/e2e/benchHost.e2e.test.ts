import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// A tiny `npm run bench -- --host`: one path, one layout, 20 messages (after 20 to warm up) on each
// side, one round, both consumers profiled. The full run (600 messages x 3 rounds, every path, both
// layouts) is the lead's measurement; this holds its output's shape and its exactly-once verdict, which
// the bench reaches by reading every order back from the store and counting deliveries and dead letters.
describe('npm run bench -- --host (tiny)', () => {
  it("prints the path's rates, ratios and CPU per message, every message handled exactly once on both sides, and the profile by layer", () => {
    const profile = mkdtempSync(join(tmpdir(), 'host-bench-profile-'));
    try {
      const run = spawnSync(
        'node_modules/.bin/tsx',
        [
          'bench/main.ts',
          '--host',
          '--messages',
          '20',
          '--rounds',
          '1',
          '--layout',
          'separate',
          '--paths',
          'OrderPlaced, new',
          '--profile',
          profile,
          '--no-build',
          '--timeout',
          '45',
        ],
        { encoding: 'utf8', timeout: 88_000, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
      );
      const output = `${run.stdout}\n${run.stderr}`;
      expect(output).toContain('20 messages x 1 interleaved rounds per path and layout');
      expect(output).toMatch(/ {2}path +layout +app msg\/s +bare msg\/s +app\/bare +paired +CPU ms\/msg app +bare +ratio\n/);
      expect(output).toMatch(
        / {2}OrderPlaced, new +separate +\d+\.\d +\d+\.\d +\d+\.\d\dx +\d+\.\d\dx +\d+\.\d\d +\d+\.\d\d +\d+\.\d\dx\n {4}rounds \(app \/ bare\): \d+\.\d\d\n/,
      );
      expect(output).toContain('the app creates one more document there, the closed arrival gate');
      // Each order read back from its side's store: one order, one outbox entry; 20 deliveries, none dead-lettered.
      expect(output).toContain('  ok   app separate OrderPlaced, new: 20 messages, 20 deliveries, 0 dead-lettered, 0 problems');
      expect(output).toContain('  ok   bare separate OrderPlaced, new: 20 messages, 20 deliveries, 0 dead-lettered, 0 problems');
      expect(output).toMatch(/ {2}OrderPlaced, new \(separate\), app: \d+ ms busy, \d+ ms idle\n/);
      expect(output).toMatch(/ {2}OrderPlaced, new \(separate\), bare loop: \d+ ms busy, \d+ ms idle\n/);
      expect(output).toMatch(/ {4}store adapter \(src\/cosmos, @azure\/cosmos\) +\d+ ms +\d+\.\d %\n/);
      expect(readdirSync(join(profile, 'OrderPlaced-new-separate')).some((f) => f.endsWith('.cpuprofile'))).toBe(true);
      expect(readdirSync(join(profile, 'OrderPlaced-new-separate-bare')).some((f) => f.endsWith('.cpuprofile'))).toBe(true);
      expect(run.status).toBe(0);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  }, 90_000);
});
