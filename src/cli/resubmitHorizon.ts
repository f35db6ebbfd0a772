import type { ResubmitRetentionSettings } from '../config.js';
import { checkResubmitHorizon } from '../idempotency/index.js';
import { retryProperties } from '../orders/index.js';
import { earliestInstant, firstEnqueuedAtProperty } from '../servicebus/index.js';

/** What the tool can see of a message's past: the broker's enqueued time and what its copies carry. */
export interface LineageView {
  readonly enqueuedTimeUtc?: Date;
  /** What `enqueuedTimeUtc` is, in the explanation (a parked item shows when it was parked). */
  readonly enqueuedTimeLabel?: string;
  readonly applicationProperties?: Readonly<Record<string, unknown>>;
}

export interface ResubmitPolicy {
  readonly retention: ResubmitRetentionSettings;
  /** `--force <reason>`: send even where the markers may have expired, recording why. */
  readonly forceReason?: string;
}

/** Per message: send it (with the copy's time-to-live capped), send it because forced, or refuse. */
export type ResubmitHorizonDecision =
  | { readonly kind: 'safe'; readonly firstEnqueuedAtEpochMs: number; readonly copyTimeToLiveMs: number; readonly checked: string }
  | { readonly kind: 'forced'; readonly firstEnqueuedAtEpochMs?: number; readonly reason: string; readonly checked: string }
  | { readonly kind: 'refused'; readonly checked: string };

/** The times a message shows of its lineage, by where the tool read them. */
const lineageSources = [
  ['enqueued time', (v: LineageView) => [v.enqueuedTimeUtc]],
  [firstEnqueuedAtProperty, (v: LineageView) => propertyValues(v, firstEnqueuedAtProperty)],
  [retryProperties.firstFailureAt, (v: LineageView) => propertyValues(v, retryProperties.firstFailureAt)],
] as const;

/**
 * Whether a copy of `name` sent now is still covered by the markers of any effect it may have
 * written. Counts from the earliest time the message shows (its enqueued time, the lineage time a
 * copy carries, the first failure of its delayed retries): a property a sender wrote can make the
 * message older, never younger than the broker's own enqueued time.
 */
export function decideResubmitHorizon(name: string, view: LineageView, nowMs: number, policy: ResubmitPolicy): ResubmitHorizonDecision {
  const seen = lineageSources
    .filter(([, read]) => earliestInstant(read(view)) !== undefined)
    .map(([source]) => (source === 'enqueued time' ? (view.enqueuedTimeLabel ?? source) : source));
  const first = earliestInstant(lineageSources.flatMap(([, read]) => read(view)));
  const { markerTtlSeconds, marginSeconds, marginExplanation } = policy.retention;
  if (first === undefined) {
    return unsafe(`${name} shows no time it was sent (no enqueued time): the age of its markers is unknown`, undefined, policy);
  }
  const check = checkResubmitHorizon({ firstEnqueuedAtEpochMs: first, nowEpochMs: nowMs, markerTtlSeconds, marginSeconds });
  const sent = `first enqueued ${new Date(first).toISOString()} (${durationText(check.ageMs)} ago; the earliest of: ${seen.join(', ')})`;
  const kept = `INBOX_MARKER_TTL_SECONDS ${markerTtlSeconds} s keeps its markers until ${new Date(check.markersKeptUntilEpochMs).toISOString()}`;
  const margin = `the margin a copy needs: ${marginExplanation}`;
  if (check.kind === 'safe') {
    const checked = `markers kept until ${new Date(check.markersKeptUntilEpochMs).toISOString()} checked: ${sent}; more than ${margin}; the copy expires in ${durationText(check.copyTimeToLiveMs)}`;
    return { kind: 'safe', firstEnqueuedAtEpochMs: first, copyTimeToLiveMs: check.copyTimeToLiveMs, checked };
  }
  return unsafe(`${name} was ${sent}; ${kept}, less than ${margin} from now: a copy could apply its effect a second time`, first, policy);
}

function unsafe(why: string, first: number | undefined, policy: ResubmitPolicy): ResubmitHorizonDecision {
  if (policy.forceReason !== undefined)
    return { kind: 'forced', firstEnqueuedAtEpochMs: first, reason: policy.forceReason, checked: `${why}; forced: ${policy.forceReason}` };
  return { kind: 'refused', checked: `${why}. Check what the store holds (dlq show), then resubmit with --force "<why>" to send it anyway` };
}

/** `31 d 2 h`, `5 h 3 min`, `42 s`: an age an operator reads at a glance. */
export function durationText(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  const sign = ms < 0 ? '-' : '';
  if (s >= 86_400) return `${sign}${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
  if (s >= 3600) return `${sign}${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${sign}${s} s`;
}

/** Every value under the name, whatever its case: a second spelling must not hide an earlier time. */
function propertyValues(view: LineageView, name: string): unknown[] {
  return Object.entries(view.applicationProperties ?? {})
    .filter(([key]) => key.toLowerCase() === name)
    .map(([, value]) => value);
}
