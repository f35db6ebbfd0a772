import fc from 'fast-check';
import type { IAsyncPropertyWithHooks } from 'fast-check';
import { describeFailure, orderFlowsProperty } from './orderFlowsProperty.js';
import { intakeProperty } from './intakeProperty.js';
import { outboxProperty } from './outboxProperty.js';
import { shipmentsProperty } from './shipmentsProperty.js';

/** How a run is bounded and replayed: the same for every world. */
export type CheckParameters = Pick<fc.Parameters<unknown>, 'seed' | 'numRuns' | 'endOnFailure' | 'path'>;

/** A check's end as the runner prints it: whether it failed, after how many runs, and fast-check's report with the timeline. */
export interface CheckResult {
  readonly failed: boolean;
  readonly numRuns: number;
  readonly report: string;
}

/** Each world generates its own scenario: the runner only checks its property, built afresh. */
function checking<Ts extends unknown[]>(build: () => IAsyncPropertyWithHooks<Ts>): (params: CheckParameters) => Promise<CheckResult> {
  return async (params) => {
    const result = await fc.check(build(), params);
    return { failed: result.failed, numRuns: result.numRuns, report: result.failed ? describeFailure(result) : '' };
  };
}

/** A property `npm run explore` can run: what it checks, and whether a counterexample is what it is for. */
export interface ExplorationProperty {
  readonly description: string;
  readonly check: (params: CheckParameters) => Promise<CheckResult>;
  /** A reintroduced or known defect: finding a counterexample is the expected result. */
  readonly expectsCounterexample: boolean;
}

export const explorationProperties: Readonly<Record<string, ExplorationProperty>> = {
  'order-flows': {
    description:
      'the order flows (order, payment, status, parking, applying parked items, the sweeper) under generated scenarios, schedules, write fates and crashes',
    check: checking(() => orderFlowsProperty()),
    expectsCounterexample: false,
  },
  'order-flows/stranded-parked-item': {
    description: 'the same, with the defect of 24649c0 reintroduced in the world: the order lists its parked items beside its gate read',
    check: checking(() => orderFlowsProperty({ listBesideGateRead: true })),
    expectsCounterexample: true,
  },
  'order-flows/payment-claims': {
    description:
      'the order flows with one paymentId under several keys (copies, other orders, amounts and currencies), orders filled to the exact-sum bound, and the operator resubmitting what the sweeper rejected',
    check: checking(() => orderFlowsProperty({ paymentClaims: true })),
    expectsCounterexample: false,
  },
  'order-flows/claim-rounds': {
    description:
      "payments whose orders never come, rejected OrderNeverArrived and resubmitted round after round past their first claim's life: the claim guards each parked item as long as it waits",
    check: checking(() => orderFlowsProperty({ claimRounds: true })),
    expectsCounterexample: false,
  },
  'order-flows/claim-written-once': {
    description: 'the same, with the claims before f8e92a7 reproduced in the world: a payment parked again does not write its claim again',
    check: checking(() => orderFlowsProperty({ claimRounds: true, claimWrittenOnce: true })),
    expectsCounterexample: true,
  },
  shipments: {
    description:
      'the shipment booking (first delivery, redelivery beside it after a lost lock, delayed-retry copies, an operator resubmit) and its reconciler under generated schedules, store and carrier fates, crashes and clock moves',
    check: checking(() => shipmentsProperty()),
    expectsCounterexample: false,
  },
  'shipments/reconciler-escalates-a-takeover': {
    description:
      'the same, with the defect of issue 24 (fixed in b0d3fe1) reintroduced in the world: the reconciler counts rounds against whatever in-progress record it re-reads',
    check: checking(() => shipmentsProperty({ reconcilerBeforeB0d3fe1: true })),
    expectsCounterexample: true,
  },
  outbox: {
    description:
      'the outbox publisher (change-feed batches, retried and redelivered, two instances on a lost lease; the sweeper) under generated schedules, store write fates, send fates and crashes, against a broker with duplicate detection',
    check: checking(() => outboxProperty()),
    expectsCounterexample: false,
  },
  'outbox/mark-before-send': {
    description: 'the same, with entries marked published before they are sent',
    check: checking(() => outboxProperty({ markBeforeSend: true })),
    expectsCounterexample: true,
  },
  intake: {
    description:
      'the HTTP intake (concurrent requests under one key with the same or another body, another key for the same order, client retries after a lost answer, crashes) under generated schedules and store write fates',
    check: checking(() => intakeProperty()),
    expectsCounterexample: false,
  },
  'intake/keys-expire': {
    description: 'the same, with key records kept 30 s: they run out under requests still handled or retried, and the key is used again',
    check: checking(() => intakeProperty({ keysExpire: true })),
    expectsCounterexample: false,
  },
  'intake/no-claim-read-back': {
    description: 'the same, with a claim batch whose answer was lost answered 503 without reading the claim back (before 9dcb195)',
    check: checking(() => intakeProperty({ noClaimReadBack: true })),
    expectsCounterexample: true,
  },
};
