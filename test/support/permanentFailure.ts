import { PermanentMessageError } from '../../src/idempotency/index.js';

/** The PermanentMessageError `fn` throws; anything else it throws is rethrown, and not throwing fails. */
export function permanentFailureOf(fn: () => unknown): PermanentMessageError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PermanentMessageError) return error;
    throw error;
  }
  throw new Error('expected a PermanentMessageError');
}
