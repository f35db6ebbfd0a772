import { describe, expect, it } from 'vitest';
import type { ProcessingOutcome } from '../../../src/idempotency/index.js';
import { decideWithRetryLayers } from '../../../src/orders/retryLayers.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { ScheduledCopy } from '../../../src/servicebus/index.js';

// A wiring with a scheduler but no signing key (settings refuse it; a hand-built consumer may not).
describe('decideWithRetryLayers without a retry state signing key', () => {
  it('hands the failure back to Service Bus, saying why no delayed copy was scheduled', async () => {
    const scheduled: ScheduledCopy[] = [];
    const scheduler = { schedule: (copy: ScheduledCopy) => (scheduled.push(copy), Promise.resolve()), close: () => Promise.resolve() };
    const failure: ProcessingOutcome = { kind: 'retry', reason: 'store unavailable' };
    const result = await decideWithRetryLayers(
      envelopeFromTriggerMetadata({ messageId: 'm-1', sequenceNumber: 1, deliveryCount: 1 }),
      {},
      () => Promise.resolve({ outcome: failure, orderId: 'o-1' }),
      { retry: { inInvocationMs: 0, firstDelayMs: 1000, maxDelayMs: 60_000, budgetMs: 3_600_000 }, scheduler, now: () => new Date('2026-12-01T10:00:00Z') },
      () => Promise.reject(new Error('not exhausted')),
    );
    expect(result).toEqual({ orderId: 'o-1', outcome: { kind: 'retry', reason: 'store unavailable; no delayed retry: the retry state signing key is missing' } });
    expect(scheduled).toEqual([]);
  });
});
