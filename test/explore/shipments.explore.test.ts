import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explorationBudget } from './budget.js';
import { describeFailure } from './orderFlowsProperty.js';
import { shipmentsProperty } from './shipmentsProperty.js';

/**
 * The shipment booking and its reconciler explored under generated scenarios and schedules: see
 * test/explore/world/shipmentWorld.ts. The seeds are fixed, so CI checks the same schedules every
 * time; `npm run explore -- --property shipments` draws new ones.
 */
/**
 * The moves every CI check must have made at least once across its runs. Not among them: a
 * reconciler run that finds the carrier's refusal (a refusal's own caller records it first, unless
 * it dies in between), which the fixed seed happens not to reach.
 */
const everyMove = [
  'write refused',
  'write applied, answer lost',
  'worker died',
  'worker died after its write applied',
  'settled after its lock was lost',
  'lock lost, delivered beside the first',
  'delayed copy sent',
  'operator resubmit',
  'commit lost-race',
  'commit already-exists',
  'carrier booked',
  'carrier booked, answer lost',
  'carrier in flight',
  'carrier look-up in flight',
  'carrier look-up unanswered',
  'carrier look-up met a kept error',
  'carrier replayed a kept answer',
  'carrier stored-error',
  'carrier unavailable',
  'carrier refused',
  'carrier unreachable',
  'carrier forgot a key',
  'outcome created',
  'outcome duplicate',
  'outcome invalid',
  'outcome rescheduled',
  'outcome retry',
  'reconciled completed',
  'reconciled still-in-progress',
  'reconciled taken-by-another',
  'reconciled escalated',
  'reconciler run failed',
  'dead-lettered',
];

describe('the shipment booking and its reconciler, explored', () => {
  it(
    'every scenario and schedule ends with one carrier booking per order, the record completed exactly when the order holds its shipment id, nothing escalated over a booking, nothing left in progress, every dead letter explained',
    async () => {
      const tally = new Map<string, number>();
      const result = await fc.check(shipmentsProperty({}, tally), explorationBudget.shipments);
      // The report names the seed and path to replay, the counterexample with the scheduler's order, and the timeline.
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBe(explorationBudget.shipments.numRuns);
      // A world that stopped generating one of its moves would pass while exploring less: each must have happened.
      const explored = Object.fromEntries(everyMove.map((move) => [move, tally.get(move) ?? 0]));
      expect(
        Object.entries(explored)
          .filter(([, n]) => n === 0)
          .map(([move]) => move),
        JSON.stringify(explored),
      ).toEqual([]);
    },
    explorationBudget.timeoutMs,
  );

  // Counterexamples that long `npm run explore` runs found, replayed at their shrunk path so that each
  // schedule is checked on every run: a defect fixed in src/, or a model rule made exact.
  it.each([
    {
      // An owner's record was created with a lease already run out (its commit waited past the lease),
      // two overlapping reconciler runs both found its call in flight and each counted a round:
      // escalated at maxAttempts 2 on one observation; the booking then landed and its owner died
      // before hearing it. Fixed in src/ (countFailedRound counts one round per attempt observed).
      what: 'two overlapping reconciler runs counting one in-flight observation twice',
      seed: 669_929_978,
      path: '2363:1:3:8:6:6',
    },
    {
      // An owner's create waited six minutes past its lease; three reconciler runs one after another at
      // one instant each saw its call in flight: escalated within seconds, then the carrier booked and
      // the owner died before hearing it. Fixed in src/ (a round counts only a lease after the last).
      what: 'reconciler runs one after another at one instant counting three rounds',
      seed: 42_261_206,
      path: '910:7:7:11:11:11:12',
    },
  ])(
    'replays $what (seed $seed)',
    async ({ seed, path }) => {
      // Replayed at its path: the shrunk scenario with its scheduler's order (the few runs counted are the path's shrink steps).
      const result = await fc.check(shipmentsProperty(), { seed, path, numRuns: 1 });
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBeGreaterThan(0);
    },
    explorationBudget.timeoutMs,
  );

  it(
    'finds the reconciler escalating a booking a live owner took over, once it counts rounds against any in-progress record it re-reads, as before b0d3fe1',
    async () => {
      const result = await fc.check(shipmentsProperty({ reconcilerBeforeB0d3fe1: true }), explorationBudget['shipments/reconciler-escalates-a-takeover']);
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(
        /o\d's record is escalated \(not settled after \d reconcile rounds; .*\) while the carrier holds booking SHP-\d+ under its key/,
      );
    },
    explorationBudget.timeoutMs,
  );
});
