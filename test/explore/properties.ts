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
};
