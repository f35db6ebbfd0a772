import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { InvocationContext, Timer } from '@azure/functions';
import { loadSettings } from '../src/config.js';
import { createParkedItemSweeper } from '../src/orders/index.js';

const sweeper = createParkedItemSweeper(loadSettings());

/**
 * Applies what is still parked for orders that are stored, and rejects as OrderNeverArrived what
 * waited past PARKED_ITEM_HORIZON_SECONDS. A throw fails the run; the next run starts over, and
 * every write it makes is etag-guarded, so a run cut short leaves nothing half done.
 */
export async function sweepParkedItems(_timer: Timer, context: InvocationContext): Promise<void> {
  await sweeper.sweep(context);
}

app.timer('sweepParkedItems', {
  schedule: '%PARKED_SWEEP_SCHEDULE%',
  // Not on every cold start: Flex Consumption starts instances often, and the schedule suffices.
  runOnStartup: false,
  handler: sweepParkedItems,
});
