import fc from 'fast-check';
import type { Scheduler } from 'fast-check';
import { InvariantViolation } from './orderFlowsProperty.js';
import { checkShipmentsAtQuiescence } from './world/shipmentInvariants.js';
import { shipmentScenarioArb } from './world/shipmentScenario.js';
import type { ShipmentScenario } from './world/shipmentScenario.js';
import { runShipmentWorld } from './world/shipmentWorld.js';
import type { ShipmentWorldOptions } from './world/shipmentWorld.js';

/** One run of the shipments world under a generated scenario and schedule; throws when an invariant breaks. */
export function shipmentsPredicate(options: ShipmentWorldOptions = {}, tally?: Map<string, number>) {
  return async (scenario: ShipmentScenario, s: Scheduler): Promise<void> => {
    const run = await runShipmentWorld(scenario, s, options);
    for (const [move, n] of run.timeline.moves) tally?.set(move, (tally.get(move) ?? 0) + n);
    const violations = checkShipmentsAtQuiescence(scenario, run);
    if (violations.length > 0) throw new InvariantViolation(violations, run.timeline.toString());
  };
}

/** `tally`, when given, adds up the world's moves over every run (shrinking included): what the check explored. */
export function shipmentsProperty(options: ShipmentWorldOptions = {}, tally?: Map<string, number>) {
  return fc.asyncProperty(shipmentScenarioArb(), fc.scheduler(), shipmentsPredicate(options, tally));
}
