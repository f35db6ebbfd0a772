import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { InvocationContext, Timer } from '@azure/functions';
import { loadSettings } from '../src/config.js';
import { createOutboxPublisher } from '../src/outbox/index.js';

const publisher = createOutboxPublisher(loadSettings());

/**
 * Republishes outbox entries still pending after OUTBOX_SWEEP_MIN_AGE_SECONDS (a batch the trigger
 * gave up on, a lease lost mid-batch) and logs the outbox lag, as an error line above
 * OUTBOX_LAG_ALERT_SECONDS. A throw fails this run only; the next one starts over.
 */
export async function sweepOutbox(_timer: Timer, context: InvocationContext): Promise<void> {
  await publisher.sweep(context);
}

app.timer('sweepOutbox', {
  schedule: '%OUTBOX_SWEEP_SCHEDULE%',
  runOnStartup: false,
  handler: sweepOutbox,
});
