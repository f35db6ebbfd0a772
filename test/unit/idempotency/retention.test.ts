import { describe, expect, it } from 'vitest';
import { checkMarkerRetention, checkResubmitHorizon, resubmitMarginSeconds } from '../../../src/idempotency/index.js';

describe('checkMarkerRetention', () => {
  // 10 deliveries x (300 s renewing + 60 s lock) + 14 days (1,209,600 s) + 1 day of delayed retries (86,400 s)
  // + 14 days = 2,509,200 s, worked out by hand.
  const queue = {
    maxDeliveryCount: 10,
    lockDurationSeconds: 60,
    lockRenewalMaxSeconds: 300,
    messageTimeToLiveSeconds: 1_209_600,
    retryBudgetSeconds: 86_400,
    resubmitHorizonSeconds: 1_209_600,
  };

  it('accepts a marker that outlives the last possible copy of its message', () => {
    expect(checkMarkerRetention({ ...queue, markerTtlSeconds: 2_592_000 })).toEqual({ ok: true, requiredSeconds: 2_509_200 });
    expect(checkMarkerRetention({ ...queue, markerTtlSeconds: 2_509_200 }).ok).toBe(true);
  });

  it('refuses one second less, showing the arithmetic', () => {
    const check = checkMarkerRetention({ ...queue, markerTtlSeconds: 2_509_199 });
    expect(check.ok).toBe(false);
    expect(!check.ok && check.explanation).toBe(
      'inbox marker retention 2509199 s is shorter than required: maxDeliveryCount 10 x (lock renewal 300 s + lockDuration 60 s)' +
        ' + message time-to-live 1209600 s + retry budget 86400 s + dead-letter resubmit horizon 1209600 s = 2509200 s',
    );
  });

  it('counts the lock renewal period: a hung consumer holds each delivery that much longer', () => {
    const withoutRenewal = checkMarkerRetention({ ...queue, lockRenewalMaxSeconds: 0, markerTtlSeconds: 2_506_200 });
    expect(withoutRenewal.ok).toBe(true);
    expect(checkMarkerRetention({ ...queue, lockRenewalMaxSeconds: 1, markerTtlSeconds: 2_506_200 }).ok).toBe(false);
  });

  it('counts the retry budget: a copy re-sent for a day can arrive a day later', () => {
    expect(checkMarkerRetention({ ...queue, retryBudgetSeconds: 0, markerTtlSeconds: 2_422_800 }).ok).toBe(true);
    expect(checkMarkerRetention({ ...queue, retryBudgetSeconds: 1, markerTtlSeconds: 2_422_800 }).ok).toBe(false);
  });
});

describe('resubmitMarginSeconds', () => {
  it('is every delivery of the copy held to the end plus a fresh retry budget', () => {
    // 10 x (300 + 60) + 86,400 = 90,000 s, by hand.
    expect(resubmitMarginSeconds({ maxDeliveryCount: 10, lockDurationSeconds: 60, lockRenewalMaxSeconds: 300, retryBudgetSeconds: 86_400 })).toBe(90_000);
    expect(resubmitMarginSeconds({ maxDeliveryCount: 2, lockDurationSeconds: 5, lockRenewalMaxSeconds: 0, retryBudgetSeconds: 0 })).toBe(10);
  });
});

describe('checkResubmitHorizon', () => {
  // First sent 2026-11-01T00:00:00Z; markers kept 10 days, so until 2026-11-11T00:00:00Z; the copy needs 1 hour of them.
  const first = Date.parse('2026-11-01T00:00:00Z');
  const check = (now: string) =>
    checkResubmitHorizon({ firstEnqueuedAtEpochMs: first, nowEpochMs: Date.parse(now), markerTtlSeconds: 864_000, marginSeconds: 3600 });

  it('is safe while more than the margin of the markers is left, the rest being how long the copy may wait', () => {
    expect(check('2026-11-10T22:59:59.999Z')).toEqual({
      kind: 'safe',
      ageMs: 860_399_999,
      markersKeptUntilEpochMs: Date.parse('2026-11-11T00:00:00Z'),
      copyTimeToLiveMs: 1,
    });
    expect(check('2026-11-01T00:00:00Z')).toMatchObject({ kind: 'safe', ageMs: 0, copyTimeToLiveMs: 860_400_000 });
  });

  it('says the markers may have expired from the instant only the margin is left', () => {
    expect(check('2026-11-10T23:00:00Z')).toEqual({
      kind: 'markers-may-have-expired',
      ageMs: 864_000_000 - 3_600_000,
      markersKeptUntilEpochMs: Date.parse('2026-11-11T00:00:00Z'),
    });
    expect(check('2026-12-01T00:00:00Z').kind).toBe('markers-may-have-expired');
  });
});
