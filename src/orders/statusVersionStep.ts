import { PermanentMessageError } from '../idempotency/index.js';
import { orderFailure } from './failureCodes.js';
import type { FlowContext } from './flowContext.js';
import type { OrderStatusChanged } from './schemas.js';

/** STATUS_VERSION_MAX_STEP's default: far more changes than any real reordering holds back. */
export const defaultStatusVersionMaxStep = 1000;

/**
 * A status version far above the stored one is not a late or early copy but a sender's mistake (or
 * worse): applied, it would make every real change after it stale. So a change may move the version
 * by at most `statusVersionMaxStep` (an order with no status yet is at 0); the step is judged against
 * the version it would be applied to, so a parked change is judged again when its order comes.
 */
export function versionJump(change: OrderStatusChanged, storedVersion: number, ctx: Pick<FlowContext, 'statusVersionMaxStep'>): string | undefined {
  const maxStep = ctx.statusVersionMaxStep ?? defaultStatusVersionMaxStep;
  if (change.version - storedVersion <= maxStep) return undefined;
  return `OrderStatusChanged version ${change.version} for order ${change.orderId} is more than ${maxStep} above the stored version ${storedVersion} (STATUS_VERSION_MAX_STEP)`;
}

export function versionJumpError(description: string, dedupKey: string): PermanentMessageError {
  return new PermanentMessageError(orderFailure.VersionJump, description, dedupKey);
}
