import { describe, expect, it } from 'vitest';
import { checkMarkerRetention } from '../../../src/idempotency/index.js';

describe('checkMarkerRetention', () => {
  // 10 deliveries x (300 s renewing + 60 s lock) + 14 days (1,209,600 s) + 1 day of delayed retries (86,400 s)
  // + 14 days = 2,509,200 s, worked out by hand.
  const queue = { maxDeliveryCount: 10, lockDurationSeconds: 60, lockRenewalMaxSeconds: 300, messageTimeToLiveSeconds: 1_209_600, retryBudgetSeconds: 86_400, resubmitHorizonSeconds: 1_209_600 };

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
