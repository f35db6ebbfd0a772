import { describe, expect, it } from 'vitest';
import type { ProcessingOutcome } from '../../../src/idempotency/index.js';
import { decideWithRetryLayers, readReceivedMessage } from '../../../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { ScheduledCopy } from '../../../src/servicebus/index.js';
import { signedRetryProperties, testRetryStateKey } from '../../support/signedRetryState.js';

// A wiring with a scheduler but no signing key (settings refuse it; a hand-built consumer may not).
describe('decideWithRetryLayers without a retry state signing key', () => {
  it('hands the failure back to Service Bus, saying why no delayed copy was scheduled', async () => {
    const scheduled: ScheduledCopy[] = [];
    const scheduler = { schedule: (copy: ScheduledCopy) => (scheduled.push(copy), Promise.resolve()), close: () => Promise.resolve() };
    const failure: ProcessingOutcome = { kind: 'retry', reason: 'store unavailable' };
    const result = await decideWithRetryLayers(
      readReceivedMessage(envelopeFromTriggerMetadata({ messageId: 'm-1', sequenceNumber: 1, deliveryCount: 1 }), {}, 262_144),
      () => Promise.resolve({ outcome: failure, orderId: 'o-1' }),
      { retry: { inInvocationMs: 0, firstDelayMs: 1000, maxDelayMs: 60_000, budgetMs: 3_600_000 }, scheduler, now: () => new Date('2026-12-01T10:00:00Z') },
      () => Promise.reject(new Error('not exhausted')),
    );
    expect(result).toEqual({
      orderId: 'o-1',
      outcome: { kind: 'retry', reason: 'store unavailable; no delayed retry: the retry state signing key is missing' },
    });
    expect(scheduled).toEqual([]);
  });
});

describe('decideWithRetryLayers during a rotation of the signing key', () => {
  it('verifies a copy signed with retryStatePreviousKey, so the copy it schedules continues the count', async () => {
    const scheduled: ScheduledCopy[] = [];
    const scheduler = { schedule: (copy: ScheduledCopy) => (scheduled.push(copy), Promise.resolve()), close: () => Promise.resolve() };
    const failure: ProcessingOutcome = { kind: 'retry', reason: 'store unavailable' };
    const properties = signedRetryProperties('copy-2', { dedupKey: 'm-1', attempt: 2, firstFailureAt: '2026-12-01T09:00:00.000Z', root: 'm-1' });
    const result = await decideWithRetryLayers(
      readReceivedMessage(
        envelopeFromTriggerMetadata({ messageId: 'copy-2', sequenceNumber: 4, deliveryCount: 1, applicationProperties: properties }),
        {},
        262_144,
      ),
      () => Promise.resolve({ outcome: failure, orderId: 'o-1' }),
      {
        retry: { inInvocationMs: 0, firstDelayMs: 1000, maxDelayMs: 60_000, budgetMs: 86_400_000 },
        scheduler,
        retryStateKey: 'the-new-retry-state-signing-key-0123456789abcdef',
        retryStatePreviousKey: testRetryStateKey,
        now: () => new Date('2026-12-01T10:00:00Z'),
      },
      () => Promise.reject(new Error('not exhausted')),
    );
    expect(result.outcome).toMatchObject({ kind: 'rescheduled', attempt: 3 });
    expect(scheduled[0]?.applicationProperties).toMatchObject({ 'retry-attempt': 3, 'retry-first-failure-at': '2026-12-01T09:00:00.000Z' });
  });
});
