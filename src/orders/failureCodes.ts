import { failureCodes } from '../idempotency/index.js';

/**
 * The reasons the orders flows reject a message for, beyond the core's: stored in rejection records
 * and parked items, and read by the operator tool, so the strings never change.
 */
export const orderFailure = failureCodes([
  /** A payment in another currency than its order's. */
  'CurrencyMismatch',
  /** A status version further above the stored one than STATUS_VERSION_MAX_STEP allows. */
  'VersionJump',
  /** A payment that would take the order's amountPaid past an exact sum. */
  'AmountOutOfRange',
]);
