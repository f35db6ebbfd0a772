import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { InvocationContext, Timer } from '@azure/functions';
import { isFunctionDisabled, loadSettings } from '../src/config.js';
import { createShipmentReconciler } from '../src/shipments/index.js';

// Disabled (no carrier configured): the host starts no listener, and nothing here asks for CARRIER_API_URL.
const reconciler = isFunctionDisabled('reconcileShipments') ? undefined : createShipmentReconciler(loadSettings());

/**
 * Settles shipment records whose lease ran out (their owner crashed, or their message stopped
 * coming back): a look-up at the carrier by key, a call under the same key only if it booked
 * nothing, and escalation after SHIPMENT_RECONCILE_MAX_ATTEMPTS rounds. Every write is etag-guarded.
 */
export async function reconcileShipments(_timer: Timer, context: InvocationContext): Promise<void> {
  if (!reconciler) throw new Error('reconcileShipments is disabled (AzureWebJobs.reconcileShipments.Disabled)');
  await reconciler.reconcile(context, context.traceContext?.traceParent ?? undefined);
}

app.timer('reconcileShipments', {
  schedule: '%SHIPMENT_RECONCILE_SCHEDULE%',
  runOnStartup: false,
  handler: reconcileShipments,
});
