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

/** The moves the payment-claims check must have made at least once across its runs. */
const everyClaimMove = [
  'order filled to the exact-sum bound',
  'invalid AmountOutOfRange',
  'invalid CurrencyMismatch',
  'conflict PayloadConflict',
  'copy under another key went on as the claimer',
  'payment claim taken over',
  'delivered under a reused MessageId',
  'sweeper rejected parked items',
  'operator resubmitted a parked item',
  'parked items applied with their order',
  'outcome duplicate',
  'write refused',
  'write applied, answer lost',
  'worker died',
  'worker died after its write applied',
  'settled after its lock was lost',
  'dead-lettered',
];

describe('the payment claims, explored (order-flows/payment-claims)', () => {
  it(
    'one paymentId under several keys, orders, amounts and currencies, near the exact-sum bound, resubmitted by the operator: counted at most once and on one order, nothing lost, every refusal explained by a reason that holds',
    async () => {
      const tally = new Map<string, number>();
      const result = await fc.check(orderFlowsProperty({ paymentClaims: true }, undefined, tally), explorationBudget['order-flows/payment-claims']);
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBe(explorationBudget['order-flows/payment-claims'].numRuns);
      const explored = Object.fromEntries(everyClaimMove.map((move) => [move, tally.get(move) ?? 0]));
      expect(
        Object.entries(explored)
          .filter(([, n]) => n === 0)
          .map(([move]) => move),
        JSON.stringify(explored),
      ).toEqual([]);
    },
    explorationBudget.timeoutMs,
  );

  // The schedules of the void-claim review (test/unit/orders/voidClaimRaces.test.ts), as this world
  // found them with the rule before the fix put back in src/ (each fails there, passes with the fix).
  it.each([
    {
      // P1 claimed for o2 (1 USD); a payment naming o1 meets the claim and reads o2's marker (none);
      // the claimer applies, filling o2 to the exact-sum bound; the taker reads o2, too full for the
      // claim's payment, takes the claim for void and counts P1 on o1 as well. Found with the marker
      // read before the order (as in 21f0adf, before 7922e1d).
      what: 'a takeover reading the marker, the claimer applying, then the order it filled: P1 counted on two orders',
      seed: 1_927_757_697,
      path: '221:0:0:4:4:5:5:7:4:3:4:4:7:10:10:10:10:10:11:10:10:13:3:12',
    },
    {
      // A sender reused MessageId pay1 for another payload of P2 (the same payment, for o2), which
      // claimed P2 and applied it; pay1 itself was then refused (AmountOutOfRange, o2 full), recorded
      // under pay1; a payment naming o1 found the marker not yet written, then that record under the
      // claim's MessageId: void, taken over, P2 counted on o1 too. Found with the rule before 3345edd.
      what: "a rejection recorded under the claimer's reused MessageId taken for the claim's: P2 counted on two orders",
      seed: 1_812_912_583,
      path: '271:3:6:8:7:7:10:12:14:14:14:14:15:14:18:19:24:23:26:26:26',
    },
    {
      // P2's claimer is refused by its stored order for good (no marker), yet, with the rule before
      // 3345edd, no record said so yet: a valid payment under P2 ended in a conflict with a void claim.
      what: 'a valid payment in conflict with a claim its order refuses for good',
      seed: 11_054_998,
      path: '209:3:4:5:6:7:9:9:9:9:9:9:9:9:10:11:11:11',
    },
  ])(
    'replays $what (seed $seed)',
    async ({ seed, path }) => {
      const result = await fc.check(orderFlowsProperty({ paymentClaims: true }), { seed, path, numRuns: 1 });
      expect(result.failed, describeFailure(result)).toBe(false);
      // The counterexample is the first run; fast-check then walks on through the shrink siblings after it, all passing too.
      expect(result.numRuns).toBeGreaterThanOrEqual(1);
    },
    explorationBudget.timeoutMs,
  );
});

describe('the payment claims through rounds of OrderNeverArrived and resubmits, explored (order-flows/claim-rounds)', () => {
  it(
    "a payment whose order never comes, rejected and resubmitted round after round past its first claim's life, waits parked under a claim naming its key",
    async () => {
      const tally = new Map<string, number>();
      const result = await fc.check(orderFlowsProperty({ claimRounds: true }, undefined, tally), explorationBudget['order-flows/claim-rounds']);
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBe(explorationBudget['order-flows/claim-rounds'].numRuns);
      for (const move of ['sweeper rejected parked items', 'operator resubmitted a parked item', 'copy under another key went on as the claimer'])
        expect(tally.get(move) ?? 0, move).toBeGreaterThan(0);
    },
    explorationBudget.timeoutMs,
  );

  it(
    'finds a parked item that outlives its claim once a parking does not write the claim again, as before f8e92a7',
    async () => {
      const result = await fc.check(orderFlowsProperty({ claimRounds: true, claimWrittenOnce: true }), explorationBudget['order-flows/claim-written-once']);
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(/waits parked for o\d without its payment's claim naming its key/);
    },
    explorationBudget.timeoutMs,
  );
});
