import { describe, expect, it } from 'vitest';
import { PermanentMessageError, TransientStoreError } from '../../../src/idempotency/index.js';
import { throwUnlessCompletable } from '../../../src/orders/index.js';

describe('throwUnlessCompletable', () => {
  it.each(['created', 'duplicate'] as const)('completes a %s message', (kind) => {
    expect(() => throwUnlessCompletable({ kind })).not.toThrow();
  });

  it('completes a parked message (the item is durable in the store) and a rescheduled one (its copy is accepted)', () => {
    expect(() => throwUnlessCompletable({ kind: 'parked', itemId: 'parked|payment|p-1' })).not.toThrow();
    expect(() =>
      throwUnlessCompletable({ kind: 'rescheduled', attempt: 1, copyMessageId: 'm~retry-1', enqueueAt: '2026-12-01T10:00:00Z', reason: 'r' }),
    ).not.toThrow();
  });

  it('never completes an outcome it has no decision for', () => {
    expect(() => throwUnlessCompletable({ kind: 'future' } as never)).toThrow(new TypeError('no settlement for outcome "future"'));
  });

  it('completes a stale message', () => {
    expect(() => throwUnlessCompletable({ kind: 'stale', storedVersion: 3 })).not.toThrow();
  });

  it('throws the permanent error of a conflict or an invalid message, so it is never completed', () => {
    const error = new PermanentMessageError('PayloadConflict', 'x', 'k');
    expect(() => throwUnlessCompletable({ kind: 'conflict', error })).toThrow(error);
    expect(() => throwUnlessCompletable({ kind: 'invalid', error })).toThrow(error);
  });

  it('throws the cause of a retry, or a transient error saying why', () => {
    const cause = new TransientStoreError('throttled', 429);
    expect(() => throwUnlessCompletable({ kind: 'retry', reason: 'r', cause })).toThrow(cause);
    expect(() => throwUnlessCompletable({ kind: 'retry', reason: 'order o-1 is not stored yet' })).toThrow(/order o-1 is not stored yet/);
  });
});
