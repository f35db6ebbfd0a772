import { describe, expect, it } from 'vitest';
import { decideResubmitHorizon, durationText } from '../../../src/cli/resubmitHorizon.js';

// Markers kept 30 days; a copy needs 25 hours of them (10 x (300 s + 60 s) + 1 day).
const retention = { markerTtlSeconds: 2_592_000, marginSeconds: 90_000, marginExplanation: '10 x (300 s + 60 s) + 86400 s = 90000 s' };
const sent = Date.parse('2026-11-01T00:00:00Z');
// The last instant a copy is safe: 30 days less 25 hours after the first send, less one millisecond.
const lastSafe = sent + 2_592_000_000 - 90_000_000 - 1;
const decide = (view: Parameters<typeof decideResubmitHorizon>[1], nowMs: number, forceReason?: string) =>
  decideResubmitHorizon('message pay-1', view, nowMs, { retention, forceReason });

describe('decideResubmitHorizon', () => {
  it("sends a message while more than the margin of its markers is left, capping the copy's time-to-live at the rest", () => {
    const decision = decide({ enqueuedTimeUtc: new Date(sent) }, lastSafe);
    expect(decision).toMatchObject({ kind: 'safe', firstEnqueuedAtEpochMs: sent, copyTimeToLiveMs: 1 });
    expect(decision.checked).toBe(
      'markers kept until 2026-12-01T00:00:00.000Z checked: first enqueued 2026-11-01T00:00:00.000Z (28 d 22 h ago; the earliest of: enqueued time); ' +
        'more than the margin a copy needs: 10 x (300 s + 60 s) + 86400 s = 90000 s; the copy expires in 0 s',
    );
  });

  it('refuses it from the instant only the margin is left, naming the message, its age, the TTL and the setting', () => {
    const decision = decide({ enqueuedTimeUtc: new Date(sent) }, lastSafe + 1);
    expect(decision).toEqual({
      kind: 'refused',
      checked:
        'message pay-1 was first enqueued 2026-11-01T00:00:00.000Z (28 d 23 h ago; the earliest of: enqueued time); INBOX_MARKER_TTL_SECONDS 2592000 s keeps its markers until ' +
        '2026-12-01T00:00:00.000Z, less than the margin a copy needs: 10 x (300 s + 60 s) + 86400 s = 90000 s from now: a copy could apply its effect a second time. ' +
        'Check what the store holds (dlq show), then resubmit with --force "<why>" to send it anyway',
    });
  });

  it('sends a refused one when forced, recording the reason, and keeps the lineage time', () => {
    const decision = decide({ enqueuedTimeUtc: new Date(sent) }, lastSafe + 1, 'payment checked by hand');
    expect(decision).toMatchObject({ kind: 'forced', firstEnqueuedAtEpochMs: sent, reason: 'payment checked by hand' });
    expect(decision.checked).toMatch(/^message pay-1 was first enqueued .*a second time; forced: payment checked by hand$/);
  });

  it('needs no force for a safe message: --force on a batch sends the safe ones as safe', () => {
    expect(decide({ enqueuedTimeUtc: new Date(sent) }, sent, 'why').kind).toBe('safe');
  });

  it('counts from the earliest time the message shows: the lineage a resubmitted copy carries, or its first delayed-retry failure', () => {
    const copyEnqueued = new Date(sent + 20 * 86_400_000);
    const resubmitted = decide({ enqueuedTimeUtc: copyEnqueued, applicationProperties: { 'first-enqueued-at': '2026-11-01T00:00:00.000Z' } }, lastSafe + 1);
    expect(resubmitted.kind).toBe('refused');
    expect(resubmitted.checked).toContain('the earliest of: enqueued time, first-enqueued-at)');
    const retried = decide({ enqueuedTimeUtc: copyEnqueued, applicationProperties: { 'retry-first-failure-at': '2026-11-01T00:00:00.000Z' } }, lastSafe);
    expect(retried).toMatchObject({ kind: 'safe', firstEnqueuedAtEpochMs: sent });
    expect(retried.checked).toContain('the earliest of: enqueued time, retry-first-failure-at)');
  });

  it('never lets a written time make the message younger than the broker says, nor hide behind another spelling', () => {
    const forged = { enqueuedTimeUtc: new Date(sent), applicationProperties: { 'first-enqueued-at': '2026-11-30T00:00:00.000Z' } };
    expect(decide(forged, lastSafe + 1).kind).toBe('refused');
    const twoSpellings = {
      enqueuedTimeUtc: new Date(sent + 20 * 86_400_000),
      applicationProperties: { 'First-Enqueued-At': '2026-11-25T00:00:00.000Z', 'first-enqueued-at': '2026-11-01T00:00:00.000Z' },
    };
    expect(decide(twoSpellings, lastSafe + 1).kind).toBe('refused');
    expect(decide({ enqueuedTimeUtc: new Date(sent), applicationProperties: { 'first-enqueued-at': 'yesterday' } }, lastSafe)).toMatchObject({
      kind: 'safe',
      firstEnqueuedAtEpochMs: sent,
    });
  });

  it("names the broker's time as the caller labels it (a parked item shows when it was parked), and the properties by their names", () => {
    const parked = decide(
      { enqueuedTimeUtc: new Date(sent), enqueuedTimeLabel: 'parked at', applicationProperties: { 'first-enqueued-at': '2026-11-02T00:00:00.000Z' } },
      lastSafe,
    );
    expect(parked.checked).toContain('(28 d 22 h ago; the earliest of: parked at, first-enqueued-at)');
  });

  it('refuses a message that shows no time at all: the age of its markers is unknown', () => {
    expect(decide({}, sent)).toEqual({
      kind: 'refused',
      checked:
        'message pay-1 shows no time it was sent (no enqueued time): the age of its markers is unknown. Check what the store holds (dlq show), then resubmit with --force "<why>" to send it anyway',
    });
    expect(decide({}, sent, 'why')).toEqual({
      kind: 'forced',
      firstEnqueuedAtEpochMs: undefined,
      reason: 'why',
      checked: 'message pay-1 shows no time it was sent (no enqueued time): the age of its markers is unknown; forced: why',
    });
  });
});

describe('durationText', () => {
  it('reads in days and hours, hours and minutes, or seconds', () => {
    expect(durationText(86_400_000)).toBe('1 d 0 h');
    expect(durationText(86_399_999)).toBe('23 h 59 min');
    expect(durationText(3_600_000)).toBe('1 h 0 min');
    expect(durationText(3_599_999)).toBe('3599 s');
    expect(durationText(-61_000)).toBe('-61 s');
    expect(durationText(0)).toBe('0 s');
  });
});
