import { failureCodes } from '../idempotency/index.js';

/**
 * The reasons the shipment consumer dead-letters an event for, beyond the core's: stored in
 * rejection records and read by the operator tool, so the strings never change.
 */
export const shipmentFailure = failureCodes([
  /** The carrier refused the booking (its answer is on the shipment record). */
  'CarrierRefused',
  /** The booking under this key was escalated to an operator, who has yet to resolve it. */
  'ShipmentEscalated',
]);
