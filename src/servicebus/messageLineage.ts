/**
 * The time the first copy of a message was sent (its lineage: the original, its delayed-retry
 * copies, the copies an operator resubmitted), carried on every later copy as an ISO instant. Each
 * copy is a new message with its own enqueued time, so without it a resubmit would count the
 * markers' retention from the latest copy.
 */
export const firstEnqueuedAtProperty = 'first-enqueued-at';

/**
 * The earliest of the instants given (Dates, ISO text, or absent), as epoch milliseconds; undefined
 * when none is a time. A sender can write the property, so it is never trusted to make a message
 * younger: callers pass the broker's own enqueued time too, and the earliest wins.
 */
export function earliestInstant(candidates: readonly unknown[]): number | undefined {
  const times = candidates.map(epochMsOf).filter((t): t is number => t !== undefined);
  return times.length === 0 ? undefined : Math.min(...times);
}

function epochMsOf(value: unknown): number | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}
