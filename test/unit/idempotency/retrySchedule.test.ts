import { describe, expect, it } from 'vitest';
import { decideDelayedRetry, delayedRetryDelayMs, inInvocationPauseMs } from '../../../src/idempotency/index.js';

const policy = { inInvocationMs: 10_000, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };
const firstFailure = Date.parse('2026-12-01T10:00:00Z');

describe('delayed retries', () => {
  it('double from the first delay and stop growing at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => delayedRetryDelayMs(a, policy))).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000]);
  });

  it('schedule the next copy, numbered one past the attempt the message carries', () => {
    expect(decideDelayedRetry(0, firstFailure, firstFailure, policy)).toEqual({
      kind: 'schedule',
      attempt: 1,
      enqueueAtEpochMs: Date.parse('2026-12-01T10:00:30Z'),
    });
    expect(decideDelayedRetry(3, firstFailure, Date.parse('2026-12-01T10:10:00Z'), policy)).toEqual({
      kind: 'schedule',
      attempt: 4,
      enqueueAtEpochMs: Date.parse('2026-12-01T10:14:00Z'),
    });
  });

  it('end when the next copy would be due after the budget from the first failure', () => {
    const late = Date.parse('2026-12-02T09:45:00Z'); // 23 h 45 min after the first failure; the next copy would be due 15 min later: exactly 24 h
    expect(decideDelayedRetry(20, firstFailure, late, policy)).toMatchObject({ kind: 'schedule', attempt: 21 });
    expect(decideDelayedRetry(21, firstFailure, late + 1, policy)).toEqual({ kind: 'budget-exhausted', attempts: 21, firstFailureAtEpochMs: firstFailure });
  });
});

describe('in-invocation pauses', () => {
  it('grow from 100 ms to a 2 s ceiling, with full jitter', () => {
    expect([1, 2, 3, 5, 6, 10].map((a) => inInvocationPauseMs(a, () => 0.999_999))).toEqual([100, 200, 400, 1600, 2000, 2000]);
    expect(inInvocationPauseMs(4, () => 0)).toBe(1);
  });
});
