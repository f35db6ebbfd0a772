import fc from 'fast-check';
import type { Scheduler } from 'fast-check';
import { InvariantViolation } from './orderFlowsProperty.js';
import { checkIntakeAtQuiescence } from './world/intakeInvariants.js';
import { intakeScenarioArb } from './world/intakeScenario.js';
import type { IntakeScenario } from './world/intakeScenario.js';
import { runIntakeWorld } from './world/intakeWorld.js';
import type { IntakeWorldOptions } from './world/intakeWorld.js';

/** One run of the intake world under a generated scenario and schedule; throws when an invariant breaks. */
export function intakePredicate(options: IntakeWorldOptions = {}, tally?: Map<string, number>) {
  return async (scenario: IntakeScenario, s: Scheduler): Promise<void> => {
    const run = await runIntakeWorld(scenario, s, options);
    for (const [move, n] of run.timeline.moves) tally?.set(move, (tally.get(move) ?? 0) + n);
    const violations = checkIntakeAtQuiescence(run);
    if (violations.length > 0) throw new InvariantViolation(violations, run.timeline.toString());
  };
}

/** The HTTP intake (concurrent copies and conflicts under one key, client retries, crashes) against the scheduled store. */
export function intakeProperty(options: IntakeWorldOptions = {}, tally?: Map<string, number>) {
  return fc.asyncProperty(intakeScenarioArb({ keysExpire: options.keysExpire }), fc.scheduler(), intakePredicate(options, tally));
}
