import fc from 'fast-check';
import type { Scheduler } from 'fast-check';
import { InvariantViolation } from './orderFlowsProperty.js';
import { checkOutboxAtQuiescence } from './world/outboxInvariants.js';
import { outboxScenarioArb } from './world/outboxScenario.js';
import type { OutboxScenario } from './world/outboxScenario.js';
import { runOutboxWorld } from './world/outboxWorld.js';
import type { OutboxWorldOptions } from './world/outboxWorld.js';

/** One run of the outbox world under a generated scenario and schedule; throws when an invariant breaks. */
export function outboxPredicate(options: OutboxWorldOptions = {}, tally?: Map<string, number>) {
  return async (scenario: OutboxScenario, s: Scheduler): Promise<void> => {
    const run = await runOutboxWorld(scenario, s, options);
    for (const [move, n] of run.timeline.moves) tally?.set(move, (tally.get(move) ?? 0) + n);
    const violations = checkOutboxAtQuiescence(scenario, run);
    if (violations.length > 0) throw new InvariantViolation(violations, run.timeline.toString());
  };
}

/** The outbox publisher (change feed and sweeper) against the scheduled store and the broker model. */
export function outboxProperty(options: OutboxWorldOptions = {}, tally?: Map<string, number>) {
  return fc.asyncProperty(outboxScenarioArb(), fc.scheduler(), outboxPredicate(options, tally));
}
