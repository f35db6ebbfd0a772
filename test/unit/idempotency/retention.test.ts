import { describe, expect, it } from 'vitest';
import { checkMarkerRetention } from '../../../src/idempotency/index.js';

describe('checkMarkerRetention', () => {
  // 10 deliveries x (300 s renewing + 60 s lock) + 14 days (1,209,600 s) + 14 days = 2,422,800 s, worked out by hand.
  const queue = { maxDeliveryCount: 10, lockDurationSeconds: 60, lockRenewalMaxSeconds: 300, messageTimeToLiveSeconds: 1_209_600, resubmitHorizonSeconds: 1_209_600 };

  it('accepts a marker that outlives the last possible copy of its message', () => {
    expect(checkMarkerRetention({ ...queue, markerTtlSeconds: 2_592_000 })).toEqual({ ok: true, requiredSeconds: 2_422_800 });
    expect(checkMarkerRetention({ ...queue, markerTtlSeconds: 2_422_800 }).ok).toBe(true);
  });

  it('refuses one second less, showing the arithmetic', () => {
    const check = checkMarkerRetention({ ...queue, markerTtlSeconds: 2_422_799 });
    expect(check.ok).toBe(false);
    expect(!check.ok && check.explanation).toBe(
      'inbox marker retention 2422799 s is shorter than required: maxDeliveryCount 10 x (lock renewal 300 s + lockDuration 60 s)' +
        ' + message time-to-live 1209600 s + dead-letter resubmit horizon 1209600 s = 2422800 s',
    );
  });

  it('counts the lock renewal period: a hung consumer holds each delivery that much longer', () => {
    const withoutRenewal = checkMarkerRetention({ ...queue, lockRenewalMaxSeconds: 0, markerTtlSeconds: 2_419_800 });
    expect(withoutRenewal.ok).toBe(true);
    expect(checkMarkerRetention({ ...queue, lockRenewalMaxSeconds: 1, markerTtlSeconds: 2_419_800 }).ok).toBe(false);
  });
});
