import { resubmitMarginSeconds } from '../idempotency/index.js';
import { parseOrThrow } from './environment.js';
import type { Environment } from './environment.js';
import { settingsSchema } from './settingsSchema.js';

/** What an operator-action record's retention is computed from. */
export const operatorActionRetentionNames = { INBOX_MARKER_TTL_SECONDS: true, DLQ_RESUBMIT_HORIZON_SECONDS: true } as const;

/** What a resubmit's margin is computed from. */
export const resubmitRetentionNames = {
  INBOX_MARKER_TTL_SECONDS: true,
  QUEUE_MAX_DELIVERY_COUNT: true,
  QUEUE_LOCK_DURATION_SECONDS: true,
  LOCK_RENEWAL_MAX_SECONDS: true,
  TRANSIENT_RETRY_BUDGET_SECONDS: true,
} as const;

/** What the operator tool needs to decide whether a resubmit is still covered by the markers. */
export interface ResubmitRetentionSettings {
  readonly markerTtlSeconds: number;
  /** How long the markers must still live when a copy is sent (see `resubmitMarginSeconds`). */
  readonly marginSeconds: number;
  /** The settings the margin was computed from, for the tool's explanation. */
  readonly marginExplanation: string;
}

/**
 * How long an operator-action record is kept: as long as anything it acted on can still come back
 * (the resubmit horizon) or still has inbox markers to explain (the marker TTL), whichever is longer.
 */
export function loadOperatorActionRetentionSeconds(env: Environment = process.env): number {
  const s = parseOrThrow(settingsSchema().pick(operatorActionRetentionNames), env);
  return Math.max(s.INBOX_MARKER_TTL_SECONDS, s.DLQ_RESUBMIT_HORIZON_SECONDS);
}

/**
 * The retention settings alone, read with the app's rules (and defaults), for the operator tool: it
 * must use the same values as the app, or its check would prove nothing.
 */
export function loadResubmitRetention(env: Environment = process.env): Readonly<ResubmitRetentionSettings> {
  const s = parseOrThrow(settingsSchema().pick(resubmitRetentionNames), env);
  const marginSeconds = resubmitMarginSeconds({
    maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
    lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
    lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
    retryBudgetSeconds: s.TRANSIENT_RETRY_BUDGET_SECONDS,
  });
  const marginExplanation =
    `QUEUE_MAX_DELIVERY_COUNT ${s.QUEUE_MAX_DELIVERY_COUNT} x (LOCK_RENEWAL_MAX_SECONDS ${s.LOCK_RENEWAL_MAX_SECONDS} s + QUEUE_LOCK_DURATION_SECONDS ${s.QUEUE_LOCK_DURATION_SECONDS} s)` +
    ` + TRANSIENT_RETRY_BUDGET_SECONDS ${s.TRANSIENT_RETRY_BUDGET_SECONDS} s = ${marginSeconds} s`;
  return Object.freeze({ markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS, marginSeconds, marginExplanation });
}
