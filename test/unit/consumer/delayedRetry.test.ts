import { describe, expect, it } from 'vitest';
import { readReceivedMessage, scheduleDelayedRetry } from '../../../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { RetryScheduler, ScheduledCopy } from '../../../src/servicebus/index.js';
import { keyedCopyId, signedRetryProperties, testRetryStateKey } from '../../support/signedRetryState.js';

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
const run = (
  metadata: Record<string, unknown>,
  body: unknown,
  scheduler: RetryScheduler,
  reason?: string,
  keys: { signingKey: string; previousSigningKey?: string } = { signingKey: testRetryStateKey },
) =>
  scheduleDelayedRetry(readReceivedMessage(envelopeFromTriggerMetadata(metadata), body, 262_144), failure(reason), {
    scheduler,
    policy,
    now: () => new Date(nowMs),
    failedAtEpochMs: nowMs - 10_000,
    ...keys,
  });

describe('scheduleDelayedRetry', () => {
  it('names the copy with a keyed id, counts the round, keeps the key, the first failure and the last error, and signs them', async () => {
    const { sent, scheduler } = recordingScheduler();
    const outcome = await run(
      {
        messageId: 'm-1',
        sequenceNumber: 7,
        subject: 'PaymentReceived',
        contentType: 'application/json',
        correlationId: 'c-1',
        applicationProperties: { tenant: 'eu', n: 2, ok: true, nested: { a: 1 }, none: null },
      },
      { orderId: 'o-1' },
      scheduler,
    );
    const copyId = sent[0]?.copy.messageId ?? '';
    expect(copyId).toMatch(keyedCopyId(1));
    expect(outcome).toEqual({
      kind: 'rescheduled',
      attempt: 1,
      copyMessageId: copyId,
      enqueueAt: new Date(nowMs + 30_000).toISOString(),
      reason: 'store unavailable',
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.copy).toEqual({
      messageId: copyId,
      body: '{"orderId":"o-1"}',
      subject: 'PaymentReceived',
      contentType: 'application/json',
      correlationId: 'c-1',
      applicationProperties: {
        tenant: 'eu',
        n: 2,
        ok: true,
        ...signedRetryProperties(copyId, { dedupKey: 'm-1', attempt: 1, firstFailureAt: new Date(nowMs - 10_000).toISOString(), root: 'm-1' }),
        'retry-last-error': 'store unavailable',
      },
    });
  });

  it('gives the same copy id to a second scheduling of the same delivery, and another to another delivery, original or round', async () => {
    const { sent, scheduler } = recordingScheduler();
    const id = 'm'.repeat(128);
    await run({ messageId: id, sequenceNumber: 1, applicationProperties: {} }, { orderId: 'o-1' }, scheduler);
    await run({ messageId: id, sequenceNumber: 1, deliveryCount: 2, applicationProperties: {} }, { orderId: 'o-1' }, scheduler);
    await run({ messageId: id, sequenceNumber: 2, applicationProperties: {} }, { orderId: 'o-1' }, scheduler);
    await run({ messageId: 'other', sequenceNumber: 1, applicationProperties: {} }, { orderId: 'o-1' }, scheduler);
    const [first, again, otherDelivery, otherOriginal] = sent.map((s) => s.copy.messageId);
    expect(first?.length).toBeLessThanOrEqual(128);
    expect(again).toBe(first);
    expect(new Set([first, otherDelivery, otherOriginal]).size).toBe(3);
    expect(sent[0]?.copy.applicationProperties).toMatchObject({ 'retry-of': id, 'idempotency-key': id });
  });

  it("carries the time the lineage was first sent: the original's enqueued time, or the earlier one a copy already carries", async () => {
    const { sent, scheduler } = recordingScheduler();
    await run({ messageId: 'm-1', enqueuedTimeUtc: '2026-11-30T08:00:00.000Z' }, { orderId: 'o-1' }, scheduler);
    await run(
      { messageId: 'm-2~resubmit-1', enqueuedTimeUtc: '2026-11-30T08:00:00.000Z', applicationProperties: { 'first-enqueued-at': '2026-11-20T08:00:00.000Z' } },
      { orderId: 'o-1' },
      scheduler,
    );
    // A later time written by a sender does not make the lineage younger than the broker says it is.
    await run(
      { messageId: 'm-3', enqueuedTimeUtc: '2026-11-30T08:00:00.000Z', applicationProperties: { 'first-enqueued-at': '2026-12-24T00:00:00.000Z' } },
      { orderId: 'o-1' },
      scheduler,
    );
    await run({ messageId: 'm-4' }, { orderId: 'o-1' }, scheduler);
    expect(sent.map((s) => s.copy.applicationProperties?.['first-enqueued-at'])).toEqual([
      '2026-11-30T08:00:00.000Z',
      '2026-11-20T08:00:00.000Z',
      '2026-11-30T08:00:00.000Z',
      undefined,
    ]);
  });

  it('continues the count and the first failure time of a copy whose state verifies, keeping its root', async () => {
    const { sent, scheduler } = recordingScheduler();
    const first = '2026-12-01T09:00:00.000Z';
    await run(
      {
        messageId: 'copy-2',
        sequenceNumber: 9,
        applicationProperties: signedRetryProperties('copy-2', { dedupKey: 'm-1', attempt: 2, firstFailureAt: first, root: 'm-1' }),
      },
      'text',
      scheduler,
    );
    expect(sent[0]?.copy).toMatchObject({
      messageId: expect.stringMatching(keyedCopyId(3)),
      body: 'text',
      applicationProperties: { 'retry-attempt': 3, 'retry-first-failure-at': first, 'retry-of': 'm-1', 'idempotency-key': 'm-1' },
    });
  });

  it('treats unsigned retry properties as a first attempt, saying so: a forged first failure a year ahead buys no budget, a forged retry-of names nothing', async () => {
    const { sent, scheduler } = recordingScheduler();
    const forged = { 'retry-attempt': 1, 'retry-first-failure-at': '2027-12-01T10:00:00.000Z', 'retry-of': 'victim-1' };
    const outcome = await run({ messageId: 'm-1', sequenceNumber: 3, applicationProperties: forged }, {}, scheduler);
    expect(outcome).toMatchObject({
      kind: 'rescheduled',
      attempt: 1,
      reason: expect.stringContaining('carries no retry-signature: treated as a first attempt'),
    });
    expect(sent[0]?.copy.applicationProperties).toMatchObject({
      'retry-attempt': 1,
      'retry-first-failure-at': new Date(nowMs - 10_000).toISOString(),
      'retry-of': 'm-1',
    });
    const { sent: plain, scheduler: plainScheduler } = recordingScheduler();
    await run({ messageId: 'm-1', sequenceNumber: 3, applicationProperties: {} }, {}, plainScheduler);
    expect(sent[0]?.copy.messageId).toBe(plain[0]?.copy.messageId);
    expect(sent[0]?.copy.messageId).not.toContain('victim');
  });

  it('refuses a signature made for other values, another MessageId or another key, and counts and times that are not one', async () => {
    const state = { dedupKey: 'm-1', attempt: 5, firstFailureAt: '2026-11-30T10:00:00.000Z', root: 'm-1' };
    const cases: Record<string, unknown>[] = [
      { ...signedRetryProperties('copy-5', state), 'retry-first-failure-at': '2027-11-30T10:00:00.000Z' },
      { ...signedRetryProperties('copy-5', state), 'retry-attempt': 1 },
      { ...signedRetryProperties('copy-5', state), 'retry-of': 'victim-1' },
      { ...signedRetryProperties('copy-5', state), 'idempotency-key': 'other-key' },
      signedRetryProperties('another-copy', state),
      { ...signedRetryProperties('copy-5', state), 'retry-signature': 'x'.repeat(43) },
      { ...signedRetryProperties('copy-5', state), 'retry-signature': 7 },
      { ...signedRetryProperties('copy-5', { ...state, attempt: 0 }) },
      { ...signedRetryProperties('copy-5', state), 'retry-first-failure-at': 'yesterday' },
    ];
    for (const properties of cases) {
      const { sent, scheduler } = recordingScheduler();
      const outcome = await run({ messageId: 'copy-5', sequenceNumber: 4, applicationProperties: properties }, {}, scheduler);
      expect(outcome, JSON.stringify(properties)).toMatchObject({
        kind: 'rescheduled',
        attempt: 1,
        reason: expect.stringContaining('treated as a first attempt'),
      });
      expect(sent[0]?.copy.applicationProperties['retry-first-failure-at']).toBe(new Date(nowMs - 10_000).toISOString());
    }
  });

  describe('during a rotation of the signing key (RETRY_STATE_SIGNING_KEY_PREVIOUS)', () => {
    const rotated = { signingKey: 'the-new-retry-state-signing-key-0123456789abcdef', previousSigningKey: testRetryStateKey };
    const first = '2026-12-01T09:00:00.000Z';
    const copy2 = signedRetryProperties('copy-2', { dedupKey: 'm-1', attempt: 2, firstFailureAt: first, root: 'm-1' });

    it('verifies a copy signed with the previous key, so its budget goes on, and signs the next copy with the current key', async () => {
      const { sent, scheduler } = recordingScheduler();
      const outcome = await run({ messageId: 'copy-2', sequenceNumber: 9, applicationProperties: copy2 }, {}, scheduler, undefined, rotated);
      expect(outcome).toMatchObject({ kind: 'rescheduled', attempt: 3, reason: 'store unavailable' });
      const next = sent[0]?.copy;
      expect(next?.applicationProperties).toMatchObject({ 'retry-attempt': 3, 'retry-first-failure-at': first, 'retry-of': 'm-1' });
      // The next round verifies under the current key alone: the previous one can be dropped once the budget has run.
      const { sent: after, scheduler: afterScheduler } = recordingScheduler();
      const nextRound = await run(
        { messageId: next?.messageId, sequenceNumber: 10, applicationProperties: next?.applicationProperties },
        {},
        afterScheduler,
        undefined,
        { signingKey: rotated.signingKey },
      );
      expect(nextRound).toMatchObject({ kind: 'rescheduled', attempt: 4 });
      expect(after[0]?.copy.applicationProperties['retry-first-failure-at']).toBe(first);
    });

    it('refuses a copy signed with a key that is neither the current nor the previous one: a first attempt, its budget from this failure', async () => {
      const { sent, scheduler } = recordingScheduler();
      const outcome = await run({ messageId: 'copy-2', sequenceNumber: 9, applicationProperties: copy2 }, {}, scheduler, undefined, {
        signingKey: rotated.signingKey,
        previousSigningKey: 'some-other-retry-state-signing-key-0123456789',
      });
      expect(outcome).toMatchObject({
        kind: 'rescheduled',
        attempt: 1,
        reason: expect.stringContaining('has a retry-signature that does not verify: treated as a first attempt'),
      });
      expect(sent[0]?.copy.applicationProperties['retry-first-failure-at']).toBe(new Date(nowMs - 10_000).toISOString());
    });

    it('without the previous key, a copy signed with it is a first attempt (what a rotation without RETRY_STATE_SIGNING_KEY_PREVIOUS does)', async () => {
      const { sent, scheduler } = recordingScheduler();
      const outcome = await run({ messageId: 'copy-2', sequenceNumber: 9, applicationProperties: copy2 }, {}, scheduler, undefined, {
        signingKey: rotated.signingKey,
      });
      expect(outcome).toMatchObject({ kind: 'rescheduled', attempt: 1 });
      expect(sent[0]?.copy.applicationProperties['retry-attempt']).toBe(1);
    });
  });

  it('never takes a verified first failure later than now (clocks differ between instances)', async () => {
    const { sent, scheduler } = recordingScheduler();
    const later = new Date(nowMs + 60_000).toISOString();
    await run(
      {
        messageId: 'copy-1',
        sequenceNumber: 5,
        applicationProperties: signedRetryProperties('copy-1', { dedupKey: 'm-1', attempt: 1, firstFailureAt: later, root: 'm-1' }),
      },
      {},
      scheduler,
    );
    expect(sent[0]?.copy.applicationProperties['retry-first-failure-at']).toBe(new Date(nowMs).toISOString());
  });

  it("processes a copy scheduled by the previous release (`<root>~retry-n`, unsigned) as a first attempt under the root's dedup key", async () => {
    const { sent, scheduler } = recordingScheduler();
    const old = {
      'retry-attempt': 2,
      'retry-first-failure-at': '2026-12-01T09:00:00.000Z',
      'retry-of': 'm-1',
      'idempotency-key': 'm-1',
      'retry-last-error': 'x',
    };
    const outcome = await run({ messageId: 'm-1~retry-2', sequenceNumber: 6, applicationProperties: old }, 'text', scheduler);
    expect(outcome).toMatchObject({ kind: 'rescheduled', attempt: 1 });
    expect(sent[0]?.copy.applicationProperties).toMatchObject({ 'idempotency-key': 'm-1', 'retry-attempt': 1, 'retry-of': 'm-1~retry-2' });
  });

  it('drops any other spelling of the properties it sets from the copy', async () => {
    const { sent, scheduler } = recordingScheduler();
    await run(
      { messageId: 'm-1', sequenceNumber: 1, applicationProperties: { 'retry-Signature': 'forged', 'idempotency-Key': 'k', tenant: 't' } },
      {},
      scheduler,
    );
    const names = Object.keys(sent[0]?.copy.applicationProperties ?? {});
    expect(names).toContain('tenant');
    expect(names).not.toContain('retry-Signature');
    expect(names).not.toContain('idempotency-Key');
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
