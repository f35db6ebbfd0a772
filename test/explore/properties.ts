import type { IAsyncPropertyWithHooks, Scheduler } from 'fast-check';
import { orderFlowsProperty } from './orderFlowsProperty.js';
import { intakeProperty } from './intakeProperty.js';
import { outboxProperty } from './outboxProperty.js';

/** A property `npm run explore` can run: what it checks, and whether a counterexample is what it is for. */
export interface ExplorationProperty {
  readonly description: string;
  /** Each world its own generated scenario, with the scheduler. */
  readonly build: () => IAsyncPropertyWithHooks<[unknown, Scheduler]>;
  /** A reintroduced or known defect: finding a counterexample is the expected result. */
  readonly expectsCounterexample: boolean;
}

export const explorationProperties: Readonly<Record<string, ExplorationProperty>> = {
  'order-flows': {
    description: 'the order flows (order, payment, status, parking, applying parked items, the sweeper) under generated scenarios, schedules, write fates and crashes',
    build: () => orderFlowsProperty(),
    expectsCounterexample: false,
  },
  'order-flows/stranded-parked-item': {
    description: 'the same, with the defect of 24649c0 reintroduced in the world: the order lists its parked items beside its gate read',
    build: () => orderFlowsProperty({ listBesideGateRead: true }),
    expectsCounterexample: true,
  },
  outbox: {
    description: 'the outbox publisher (change-feed batches, retried and redelivered, two instances on a lost lease; the sweeper) under generated schedules, store write fates, send fates and crashes, against a broker with duplicate detection',
    build: () => outboxProperty(),
    expectsCounterexample: false,
  },
  'outbox/mark-before-send': {
    description: 'the same, with entries marked published before they are sent',
    build: () => outboxProperty({ markBeforeSend: true }),
    expectsCounterexample: true,
  },
  intake: {
    description: 'the HTTP intake (concurrent requests under one key with the same or another body, another key for the same order, client retries after a lost answer, crashes) under generated schedules and store write fates',
    build: () => intakeProperty(),
    expectsCounterexample: false,
  },
  'intake/no-claim-read-back': {
    description: 'the same, with a claim batch whose answer was lost answered 503 without reading the claim back (before 9dcb195)',
    build: () => intakeProperty({ noClaimReadBack: true }),
    expectsCounterexample: true,
  },
};
