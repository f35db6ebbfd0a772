/** The queue properties and operating habits that bound how late a copy of a message can arrive. */
export interface RetentionInputs {
  readonly markerTtlSeconds: number;
  readonly maxDeliveryCount: number;
  readonly lockDurationSeconds: number;
  /** How long the consumer keeps renewing a lock (host.json `maxAutoLockRenewalDuration`). */
  readonly lockRenewalMaxSeconds: number;
  readonly messageTimeToLiveSeconds: number;
  /** How long delayed retries may go on re-sending a copy after the first failure. */
  readonly retryBudgetSeconds: number;
  readonly resubmitHorizonSeconds: number;
}

export type RetentionCheck =
  { readonly ok: true; readonly requiredSeconds: number } | { readonly ok: false; readonly requiredSeconds: number; readonly explanation: string };

/**
 * A marker must outlive every copy of its message. The last copy can be consumed as late as:
 * every delivery holding its lock to the end, after waiting in the queue for its whole
 * time-to-live, re-sent as delayed retries for the whole retry budget, and then resubmitted from
 * the dead-letter queue within the operators' horizon. A delivery holds its lock longest when the consumer renews it for the whole renewal
 * period and then stops (hung, not dead): the last renewal still runs one lock duration.
 *
 *   received        last renewal                 lock lapses, redelivered
 *   |--- renewing (lockRenewalMax) ---|--- lockDuration ---|
 *
 * A marker that expires earlier lets that copy apply its effect twice.
 */
function requiredMarkerRetentionSeconds(i: Omit<RetentionInputs, 'markerTtlSeconds'>): number {
  return i.maxDeliveryCount * (i.lockRenewalMaxSeconds + i.lockDurationSeconds) + i.messageTimeToLiveSeconds + i.retryBudgetSeconds + i.resubmitHorizonSeconds;
}

export function checkMarkerRetention(i: RetentionInputs): RetentionCheck {
  const requiredSeconds = requiredMarkerRetentionSeconds(i);
  if (i.markerTtlSeconds >= requiredSeconds) return { ok: true, requiredSeconds };
  const explanation =
    `inbox marker retention ${i.markerTtlSeconds} s is shorter than required: ` +
    `maxDeliveryCount ${i.maxDeliveryCount} x (lock renewal ${i.lockRenewalMaxSeconds} s + lockDuration ${i.lockDurationSeconds} s)` +
    ` + message time-to-live ${i.messageTimeToLiveSeconds} s` +
    ` + retry budget ${i.retryBudgetSeconds} s` +
    ` + dead-letter resubmit horizon ${i.resubmitHorizonSeconds} s = ${requiredSeconds} s`;
  return { ok: false, requiredSeconds, explanation };
}

/** What bounds how late a client can retry an HTTP request with the same idempotency key. */
export interface RequestKeyRetentionInputs {
  readonly keyTtlSeconds: number;
  /** How long clients are told they may retry one request (the API's documented contract). */
  readonly clientRetryHorizonSeconds: number;
  /** How long a request may hold its key before another takes over. */
  readonly leaseSeconds: number;
}

/**
 * A request key's record must outlive the last retry a client may make: a retry arriving after
 * it expired would be taken for a new request. The first attempt may hold the key for its whole
 * lease before the horizon starts counting (a client that timed out retries after that).
 */
export function checkRequestKeyRetention(i: RequestKeyRetentionInputs): RetentionCheck {
  const requiredSeconds = i.clientRetryHorizonSeconds + i.leaseSeconds;
  if (i.keyTtlSeconds >= requiredSeconds) return { ok: true, requiredSeconds };
  const explanation = `idempotency key retention ${i.keyTtlSeconds} s is shorter than required: client retry horizon ${i.clientRetryHorizonSeconds} s + lease ${i.leaseSeconds} s = ${requiredSeconds} s`;
  return { ok: false, requiredSeconds, explanation };
}

/** What bounds how long a resubmitted copy may take to be consumed once it is delivered. */
export interface ResubmittedCopyInputs {
  readonly maxDeliveryCount: number;
  readonly lockDurationSeconds: number;
  readonly lockRenewalMaxSeconds: number;
  /** A resubmitted copy starts a fresh delayed-retry budget. */
  readonly retryBudgetSeconds: number;
}

/**
 * How long the markers must still live when a copy is resubmitted: every delivery of the copy
 * holding its lock to the end, then delayed retries for a whole fresh budget. The time the copy
 * waits in the queue is not in it: the tool caps the copy's time-to-live to what is left.
 */
export function resubmitMarginSeconds(i: ResubmittedCopyInputs): number {
  return i.maxDeliveryCount * (i.lockRenewalMaxSeconds + i.lockDurationSeconds) + i.retryBudgetSeconds;
}

export interface ResubmitHorizonInputs {
  /** The earliest time any copy of the message may have been sent: no effect of it is older. */
  readonly firstEnqueuedAtEpochMs: number;
  readonly nowEpochMs: number;
  readonly markerTtlSeconds: number;
  readonly marginSeconds: number;
}

export type ResubmitHorizonCheck =
  | {
      readonly kind: 'safe';
      readonly ageMs: number;
      readonly markersKeptUntilEpochMs: number;
      /** How long the copy may wait in the queue: its time-to-live. */
      readonly copyTimeToLiveMs: number;
    }
  | { readonly kind: 'markers-may-have-expired'; readonly ageMs: number; readonly markersKeptUntilEpochMs: number };

/**
 * Whether a copy resubmitted now would still find the markers of any effect the message may have
 * written. A marker lives `markerTtlSeconds` from its write, and no write is older than the first
 * send, so every marker lives at least until first send + TTL. The copy is safe when more than the
 * margin is left then: what remains after the margin is how long the copy may wait in the queue.
 *
 *   first send          now         now + margin      first send + TTL
 *   |--------------------|---- margin ----|-- copy TTL --|
 */
export function checkResubmitHorizon(i: ResubmitHorizonInputs): ResubmitHorizonCheck {
  const ageMs = i.nowEpochMs - i.firstEnqueuedAtEpochMs;
  const markersKeptUntilEpochMs = i.firstEnqueuedAtEpochMs + i.markerTtlSeconds * 1000;
  const copyTimeToLiveMs = markersKeptUntilEpochMs - i.nowEpochMs - i.marginSeconds * 1000;
  if (copyTimeToLiveMs > 0) return { kind: 'safe', ageMs, markersKeptUntilEpochMs, copyTimeToLiveMs };
  return { kind: 'markers-may-have-expired', ageMs, markersKeptUntilEpochMs };
}

/** What an early arrival's time-to-live must cover, as the parked-item sweeper works. */
export interface ParkedItemRetentionInputs {
  /** The TTL a parked item (and its arrival gate) is written with: the marker retention. */
  readonly itemTtlSeconds: number;
  /** How long an item waits for its order before the sweeper rejects it (OrderNeverArrived). */
  readonly parkingHorizonSeconds: number;
  readonly resubmitHorizonSeconds: number;
}

/**
 * A waiting item must still be there when the sweeper rejects it: an item that expired first would
 * be a message lost without a trace. It waits the horizon; the margin of one resubmit horizon covers
 * a sweeper that was down or behind (its oldest-parked-age metric shows that long before). The
 * rejection rewrites the item, so its TTL starts again for the operators from there.
 */
export function checkParkedItemRetention(i: ParkedItemRetentionInputs): RetentionCheck {
  const requiredSeconds = i.parkingHorizonSeconds + i.resubmitHorizonSeconds;
  if (i.itemTtlSeconds >= requiredSeconds) return { ok: true, requiredSeconds };
  const explanation =
    `parked items are kept ${i.itemTtlSeconds} s (INBOX_MARKER_TTL_SECONDS), shorter than required: ` +
    `parking horizon ${i.parkingHorizonSeconds} s (PARKED_ITEM_HORIZON_SECONDS) + dead-letter resubmit horizon ${i.resubmitHorizonSeconds} s (DLQ_RESUBMIT_HORIZON_SECONDS) = ${requiredSeconds} s, ` +
    `so an item whose order never came could expire before it is rejected`;
  return { ok: false, requiredSeconds, explanation };
}
