import { describe, expect, it } from 'vitest';
import { scheduleDelayedRetry } from '../../../src/orders/delayedRetry.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { RetryScheduler, ScheduledCopy } from '../../../src/servicebus/index.js';

// The delayed layer's decisions, with a scheduler that records what it is asked to send (our own
// port, not an SDK): what a copy carries, and when a failure is handed back instead.
const nowMs = Date.parse('2026-12-01T10:00:00Z');
const policy = { inInvocationMs: 10_000, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };

function recordingScheduler() {
  const sent: { copy: ScheduledCopy; at: Date }[] = [];
  const scheduler: RetryScheduler = {
    schedule: (copy, at) => {
      sent.push({ copy, at });
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
  return { sent, scheduler };
}

const failure = (reason = 'store unavailable') => ({ kind: 'retry' as const, reason });
const run = (metadata: Record<string, unknown>, body: unknown, scheduler: RetryScheduler, reason?: string) =>
  scheduleDelayedRetry(envelopeFromTriggerMetadata(metadata), body, failure(reason), { scheduler, policy, now: () => new Date(nowMs), failedAtEpochMs: nowMs - 10_000 });

describe('scheduleDelayedRetry', () => {
  it('names the copy after the original, counts the round, and keeps the key, the first failure and the last error', async () => {
    const { sent, scheduler } = recordingScheduler();
    const outcome = await run({ messageId: 'm-1', subject: 'PaymentReceived', contentType: 'application/json', correlationId: 'c-1', applicationProperties: { tenant: 'eu', n: 2, ok: true, nested: { a: 1 }, none: null } }, { orderId: 'o-1' }, scheduler);
    expect(outcome).toEqual({ kind: 'rescheduled', attempt: 1, copyMessageId: 'm-1~retry-1', enqueueAt: new Date(nowMs + 30_000).toISOString(), reason: 'store unavailable' });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.copy).toEqual({
      messageId: 'm-1~retry-1',
      body: '{"orderId":"o-1"}',
      subject: 'PaymentReceived',
      contentType: 'application/json',
      correlationId: 'c-1',
      applicationProperties: {
        tenant: 'eu',
        n: 2,
        ok: true,
        'idempotency-key': 'm-1',
        'retry-attempt': 1,
        'retry-first-failure-at': new Date(nowMs - 10_000).toISOString(),
        'retry-last-error': 'store unavailable',
        'retry-of': 'm-1',
      },
    });
  });

  it('keeps every copy of a MessageId of 121 to 128 characters within the 128 characters Service Bus allows, stable per round and distinct per original', async () => {
    for (const length of [121, 124, 128]) {
      const { sent, scheduler } = recordingScheduler();
      const id = 'm'.repeat(length - 1) + String(length % 10);
      await run({ messageId: id, applicationProperties: {} }, { orderId: 'o-1' }, scheduler);
      await run({ messageId: id, applicationProperties: {} }, { orderId: 'o-1' }, scheduler);
      const [first, again] = sent.map((s) => s.copy.messageId);
      expect(first?.length).toBeLessThanOrEqual(128);
      expect(again).toBe(first);
      expect(sent[0]?.copy.applicationProperties).toMatchObject({ 'retry-of': id, 'idempotency-key': id });
    }
    const { sent, scheduler } = recordingScheduler();
    await run({ messageId: 'a'.repeat(127), applicationProperties: {} }, 'x', scheduler);
    await run({ messageId: 'b'.repeat(127), applicationProperties: {} }, 'x', scheduler);
    expect(sent[0]?.copy.messageId).not.toBe(sent[1]?.copy.messageId);
  });

  it('carries the time the lineage was first sent: the original\'s enqueued time, or the earlier one a copy already carries', async () => {
    const { sent, scheduler } = recordingScheduler();
    await run({ messageId: 'm-1', enqueuedTimeUtc: '2026-11-30T08:00:00.000Z' }, { orderId: 'o-1' }, scheduler);
    await run({ messageId: 'm-2~resubmit-1', enqueuedTimeUtc: '2026-11-30T08:00:00.000Z', applicationProperties: { 'first-enqueued-at': '2026-11-20T08:00:00.000Z' } }, { orderId: 'o-1' }, scheduler);
    // A later time written by a sender does not make the lineage younger than the broker says it is.
    await run({ messageId: 'm-3', enqueuedTimeUtc: '2026-11-30T08:00:00.000Z', applicationProperties: { 'first-enqueued-at': '2026-12-24T00:00:00.000Z' } }, { orderId: 'o-1' }, scheduler);
    await run({ messageId: 'm-4' }, { orderId: 'o-1' }, scheduler);
    expect(sent.map((s) => s.copy.applicationProperties?.['first-enqueued-at'])).toEqual(['2026-11-30T08:00:00.000Z', '2026-11-20T08:00:00.000Z', '2026-11-30T08:00:00.000Z', undefined]);
  });

  it('continues the count and the first failure time a copy carries, and names the next copy after the root', async () => {
    const { sent, scheduler } = recordingScheduler();
    const first = '2026-12-01T09:00:00.000Z';
    await run({ messageId: 'm-1~retry-2', applicationProperties: { 'retry-attempt': 2, 'retry-first-failure-at': first, 'retry-of': 'm-1', 'idempotency-key': 'm-1' } }, 'text', scheduler);
    expect(sent[0]?.copy).toMatchObject({ messageId: 'm-1~retry-3', body: 'text', applicationProperties: { 'retry-attempt': 3, 'retry-first-failure-at': first, 'retry-of': 'm-1', 'idempotency-key': 'm-1' } });
  });

  it('starts the count afresh from a count that is not a positive whole number, and the time from this delivery when the one carried is not a time', async () => {
    for (const attempt of ['0', '-1', '1.5', 'many']) {
      const { sent, scheduler } = recordingScheduler();
      await run({ messageId: 'm-1', applicationProperties: { 'retry-attempt': attempt, 'retry-first-failure-at': 'yesterday' } }, {}, scheduler);
      expect(sent[0]?.copy.applicationProperties, attempt).toMatchObject({ 'retry-attempt': 1, 'retry-first-failure-at': new Date(nowMs - 10_000).toISOString() });
    }
  });

  it('takes the MessageId as the root when retry-of is empty or not text', async () => {
    for (const of of ['', 7]) {
      const { sent, scheduler } = recordingScheduler();
      await run({ messageId: 'm-9', applicationProperties: { 'retry-of': of } }, {}, scheduler);
      expect(sent[0]?.copy.messageId, String(of)).toBe('m-9~retry-1');
    }
  });

  it('cuts the last error at 500 characters and passes bytes through as they are', async () => {
    const { sent, scheduler } = recordingScheduler();
    const bytes = new TextEncoder().encode('{"a":1}');
    await run({ messageId: 'm-1' }, bytes, scheduler, 'e'.repeat(600));
    expect(sent[0]?.copy.applicationProperties['retry-last-error']).toBe('e'.repeat(500));
    expect(sent[0]?.copy.body).toBe(bytes);
  });

  it('copies a message without a body with an empty one', async () => {
    const { sent, scheduler } = recordingScheduler();
    expect((await run({ messageId: 'm-1' }, undefined, scheduler)).kind).toBe('rescheduled');
    expect(sent[0]?.copy.body).toBe('');
  });

  it('hands the failure back to Service Bus when there is nothing stable to name the copy by', async () => {
    const { sent, scheduler } = recordingScheduler();
    expect(await run({}, {}, scheduler)).toEqual(failure());
    expect(await run({ messageId: '   ' }, {}, scheduler)).toEqual(failure());
    expect(sent).toEqual([]);
  });
});
