import { signRetryState } from '../../src/consumer/index.js';

/** The key every test signs and verifies retry state with (test/support/testSettings.ts sets the same). */
export const testRetryStateKey = 'test-retry-state-signing-key-0123456789abcdef';

/** The retry properties the app would have written on copy `messageId`, signed with the test key. */
export function signedRetryProperties(
  messageId: string,
  state: { dedupKey: string; attempt: number; firstFailureAt: string; root: string },
): Record<string, string | number> {
  const signature = signRetryState(
    testRetryStateKey,
    { messageId, dedupKey: state.dedupKey },
    { attempt: state.attempt, firstFailureAtEpochMs: Date.parse(state.firstFailureAt), root: state.root },
  );
  return {
    'idempotency-key': state.dedupKey,
    'retry-attempt': state.attempt,
    'retry-first-failure-at': state.firstFailureAt,
    'retry-of': state.root,
    'retry-signature': signature,
  };
}

/** A copy's MessageId: keyed, so only its shape is known in advance. */
export const keyedCopyId = (attempt: number): RegExp => new RegExp(`^~hmac:[0-9a-f]{64}~retry-${attempt}$`);
