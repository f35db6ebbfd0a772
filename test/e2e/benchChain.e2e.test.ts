import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// A tiny `npm run bench -- --chain`: 20 orders through each chain (after 20 more to warm up), one
// round, both chains in their own processes against their own stacks. The full run (300 orders x 3
// rounds) is the lead's measurement; this holds its output's shape and its exactly-once verdict.
describe('npm run bench -- --chain (tiny)', () => {
  it("prints both chains' rates, latency percentiles, the ratio and the stages, and books every order exactly once in both", () => {
    const run = spawnSync('node_modules/.bin/tsx', ['bench/main.ts', '--chain', '--orders', '20', '--rounds', '1', '--no-build', '--timeout', '45'], {
      encoding: 'utf8',
      timeout: 58_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(output).toMatch(/20 orders x 1 interleaved rounds, closed loop at the intake \(16 clients\)/);
    expect(output).toMatch(/ {2}app \(local Functions host\) +\d+\.\d +\d+ +\d+\n {2}bare SDK chain +\d+\.\d +\d+ +\d+\n/);
    expect(output).toMatch(
      /ratio app \/ bare \(paired, median\) +\d+\.\d\dx\n {2}latency app \/ bare: p50 \d+\.\d\dx, p99 \d+\.\d\dx\n {2}round 1: app \d+\.\d orders\/s, bare \d+\.\d orders\/s \(\d+\.\d\dx\)/,
    );
    for (const stage of [
      'request -> accepted',
      'accepted -> OrderPlaced enqueued',
      'enqueued -> order stored',
      'order stored -> OrderAccepted enqueued',
      'enqueued -> booked',
      'request -> order stored',
      'request -> booked \\(end to end\\)',
    ]) {
      expect(output).toMatch(new RegExp(` {2}${stage}.* +-?\\d+ +-?\\d+ +-?\\d+ +-?\\d+\\n`));
    }
    // Both chains make the same reads and writes per order; the app's outbox adds its change-feed reads.
    expect(output).toMatch(/Store requests per order[^\n]*\n(.*\n)*? {2}orders batch +3\.00 +3\.00\n(.*\n)*? {2}orders read +7\.00 +7\.00\n/);
    expect(output).toMatch(/ {2}orders change-feed +\d+\.\d\d +0\.00\n/);
    for (const chain of ['app', 'bare']) {
      expect(output).toContain(`  ok   ${chain}: 40 orders, 40 bookings at the carrier, 0 not booked exactly once, 0 requests not answered 202`);
      expect(output).toMatch(new RegExp(`${chain}: deliveries per order: processOrder \\d\\.\\d\\d, requestShipment \\d\\.\\d\\d`));
    }
    expect(run.status).toBe(0);
  }, 60_000);
});
