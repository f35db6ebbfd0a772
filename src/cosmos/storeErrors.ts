import { PermanentMessageError, TransientStoreError } from '../idempotency/index.js';

/** Statuses after which the same request can succeed later: throttled, timed out, unavailable. */
const transientStatusCodes = new Set([408, 429, 449, 500, 503]);

/** The HTTP status of a Cosmos SDK error: `ErrorResponse.code` is the number, `statusCode` may be unset. */
export function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  if (typeof statusCode === 'number') return statusCode;
  return undefined;
}

/**
 * Turns an unexpected store failure into the error that decides the message's fate. A request too
 * large for Cosmos can never succeed (permanent); every other failure, including ones we do not
 * recognise (network resets, a batch transport error without a status, 401/403 from a role not yet
 * granted), is redelivered: a wrong "transient" costs a retry, a wrong "permanent" loses a message.
 */
export function classifyStoreFailure(error: unknown, operation: string): Error {
  const status = statusCodeOf(error);
  if (status === 413) {
    return new PermanentMessageError('MessageTooLarge', `the document is too large for Cosmos DB (${operation})`, undefined, {
      cause: error,
    });
  }
  const kind = status !== undefined && transientStatusCodes.has(status) ? 'transient' : 'unexpected';
  const detail = error instanceof Error ? error.message : String(error);
  return new TransientStoreError(`${operation} failed (${kind}, status ${status ?? 'none'}): ${detail}`, status, {
    cause: error,
  });
}
