import { app } from '@azure/functions';
import type { InvocationContext, Timer } from '@azure/functions';
import { loadSettings } from '../src/config.js';
import { createShipmentReconciler } from '../src/shipments/index.js';

const reconciler = createShipmentReconciler(loadSettings());

/**
 * Settles shipment records whose lease ran out (their owner crashed, or their message stopped
 * coming back): a look-up at the carrier by key, a call under the same key only if it booked
 * nothing, and escalation after SHIPMENT_RECONCILE_MAX_ATTEMPTS rounds. Every write is etag-guarded.
 */
export async function reconcileShipments(_timer: Timer, context: InvocationContext): Promise<void> {
  await reconciler.reconcile(context, context.traceContext?.traceParent ?? undefined);
}

app.timer('reconcileShipments', {
  schedule: '%SHIPMENT_RECONCILE_SCHEDULE%',
  runOnStartup: false,
  handler: reconcileShipments,
});
