import type { IAsyncPropertyWithHooks, Scheduler } from 'fast-check';
import { orderFlowsProperty } from './orderFlowsProperty.js';
import type { OrderScenario } from './world/orderScenario.js';

/** A property `npm run explore` can run: what it checks, and whether a counterexample is what it is for. */
export interface ExplorationProperty {
  readonly description: string;
  /** The next worlds (shipments, outbox, intake) widen this to their own generated values. */
  readonly build: () => IAsyncPropertyWithHooks<[OrderScenario, Scheduler]>;
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
  'order-flows/conflict-copy-unrecorded': {
    description: 'the same, with the tolerance of the known defect off: a conflicting re-send dead-lettered with no reason under its MessageId',
    build: () => orderFlowsProperty({}, { rejectionErasedByHandBack: true }),
    expectsCounterexample: true,
  },
  'order-flows/rejection-erased-by-hand-back': {
    description: 'the same, with the tolerance of the known defect off: a hand-back by a delivery that lost its lock, then died, erases the parked item\'s rejection',
    build: () => orderFlowsProperty({}, { conflictCopyUnrecorded: true }),
    expectsCounterexample: true,
  },
};
