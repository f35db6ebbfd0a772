import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explorationBudget } from './budget.js';
import { describeFailure, orderFlowsProperty } from './orderFlowsProperty.js';

/**
 * The order flows (OrderPlaced, PaymentReceived, OrderStatusChanged, parking, applying parked items,
 * the parked sweeper) explored under generated scenarios and schedules: see test/explore/world/.
 * The seeds are fixed, so CI checks the same schedules every time; `npm run explore` draws new ones.
 * `fc.assert` inside `it` rather than @fast-check/vitest's `test.prop`: this package is CommonJS, so
 * the world's modules see fast-check's CommonJS types and `test.prop` its ESM ones (one instance at
 * run time, two at type level); `tools/explore/main.ts` runs the same properties outside vitest.
 */
/**
 * The moves every CI check must have made at least once across its runs. Not among them: the
 * sweeper applying a parked item to a stored order, which only a stranded item (or a crash between
 * the batches of an order with more items than a batch holds) leaves it to do.
 */
const everyMove = [
  'write refused',
  'write applied, answer lost',
  'worker died',
  'worker died after its write applied',
  'settled after its lock was lost',
  'commit lost-race',
  'commit already-exists',
  'outcome parked',
  'outcome duplicate',
  'outcome stale',
  'outcome conflict',
  'outcome invalid',
  'outcome retry',
  'parked items applied with their order',
  'sweeper rejected parked items',
  'dead-lettered',
];

describe('the order flows, explored', () => {
  it(
    'every scenario and schedule ends with each order stored once, each payment counted once, the highest status, nothing stranded, every rejection explained',
    async () => {
      const tally = new Map<string, number>();
      const result = await fc.check(orderFlowsProperty(undefined, undefined, tally), explorationBudget['order-flows']);
      // The report names the seed and path to replay, the counterexample with the scheduler's order, and the timeline.
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBe(explorationBudget['order-flows'].numRuns);
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
      // Two payloads under one key before the order: the invalid one (USD) parked first, so the valid
      // one met it and was rejected as a conflict, on record; the order's batch then rejected the USD
      // one. The model wanted the valid one applied; the README's rule (a key's first payload holds it,
      // another payload is a conflict for the operator) makes the recorded conflict its escalation.
      what: 'a valid payment rejected as a conflict with an invalid one that held its key first',
      seed: 21_261_207,
      path: '319:0:4:7:8:8:10:12:12:13:13:17:17',
    },
  ])(
    'replays $what (seed $seed)',
    async ({ seed, path }) => {
      const result = await fc.check(orderFlowsProperty(), { seed, path, numRuns: 1 });
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBe(1);
    },
    explorationBudget.timeoutMs,
  );

  it(
    'finds the stranded parked item once the order lists its parked items beside its gate read, as before 43efa77',
    async () => {
      const result = await fc.check(orderFlowsProperty({ listBesideGateRead: true }), explorationBudget['order-flows/stranded-parked-item']);
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(/is left parked behind o\d's closed gate/);
    },
    explorationBudget.timeoutMs,
  );
});
