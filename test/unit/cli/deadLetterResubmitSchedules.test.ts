import type { ServiceBusMessage } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import { resubmitDeadLetters } from '../../../src/cli/dlqCommands.js';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { editAndResubmit } from '../../../src/cli/editResubmit.js';
import type { ResubmitPolicy } from '../../../src/cli/resubmitHorizon.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { keyOf } from '../../../src/consumer/index.js';
import { fakeDeadLetterQueue } from '../../support/fakeDeadLetterQueue.js';
import type { DeadLetterSeed } from '../../support/fakeDeadLetterQueue.js';
import { paymentReceived } from '../../support/orderMessages.js';

const now = Date.parse('2026-12-03T12:00:00Z');
const policy: ResubmitPolicy = { retention: { markerTtlSeconds: 30 * 86_400, marginSeconds: 86_400, marginExplanation: 'one day' } };
const payment = paymentReceived('o-1', { paymentId: 'p-1', amount: 7 });
const deadLettered = (overrides: Partial<DeadLetterSeed> = {}): DeadLetterSeed => ({
  sequenceNumber: Long.fromNumber(7),
  messageId: 'pay-1',
  subject: 'PaymentReceived',
  contentType: 'application/json',
  body: payment,
  enqueuedTimeUtc: new Date(now - 60_000),
  deadLetterReason: 'MaxDeliveryCountExceeded',
  applicationProperties: {},
  ...overrides,
});

function contextOf(queue: ReturnType<typeof fakeDeadLetterQueue>): DlqContext {
  return {
    receiver: queue.receiver,
    active: queue.active,
    sender: () => queue.sender,
    entityPath: 'orders',
    store: new InMemoryDocumentStore(() => now),
    duplicateDetectionWindowMs: 600_000,
    now: () => now,
    out: { line: () => undefined, progress: () => undefined },
  };
}

/** The dedup key the consumer gives a sent copy, or undefined when it would find none. */
const consumerKeyOf = (m: ServiceBusMessage) =>
  keyOf({ messageId: m.messageId === undefined ? undefined : String(m.messageId), applicationProperties: m.applicationProperties ?? {} }, undefined)?.value;

describe('resubmit schedules', () => {
  it('sends no copy of a message without any dedup key, which the consumer refuses keyless, rather than key it by a MessageId the tool made up', async () => {
    const queue = fakeDeadLetterQueue([deadLettered({ messageId: undefined })]);
    const reports = await resubmitDeadLetters(contextOf(queue), { targets: ['7'], all: false }, false, policy);
    expect(queue.sent.map(consumerKeyOf)).toEqual([]);
    expect(reports).toMatchObject([{ sequenceNumber: 7, outcome: 'refused', detail: expect.stringContaining('no dedup key') }]);
    expect(queue.remaining().map((m) => m.sequenceNumber?.toNumber())).toEqual([7]);
  });

  it('sends no copy that would pin the MessageId as idempotency-key over a CloudEvent whose attributes the consumer refused', async () => {
    const queue = fakeDeadLetterQueue([deadLettered({ applicationProperties: { 'cloudEvents:id': 'e-1' }, deadLetterReason: 'InvalidCloudEvent' })]);
    const reports = await resubmitDeadLetters(contextOf(queue), { targets: ['pay-1'], all: false }, false, policy);
    expect(queue.sent).toEqual([]);
    expect(reports).toMatchObject([{ outcome: 'refused', detail: expect.stringContaining('no dedup key') }]);
  });

  // Found by a review: the tool kept the MessageId once the original's own send was older than the
  // duplicate-detection window, but the broker's history is by MessageId across all messages: another
  // message sent under the same MessageId (with a key of its own) inside the window made the broker
  // drop the copy silently, and the tool removed the original: lost.
  it('loses no message whose MessageId another message with another key used inside the window', async () => {
    const a = deadLettered({
      sequenceNumber: Long.fromNumber(1),
      messageId: 'evt-1',
      applicationProperties: { 'idempotency-key': 'shop-a|evt-1' },
      enqueuedTimeUtc: new Date(now - 720_000),
    });
    const b = deadLettered({
      sequenceNumber: Long.fromNumber(2),
      messageId: 'evt-1',
      applicationProperties: { 'idempotency-key': 'shop-b|evt-1' },
      enqueuedTimeUtc: new Date(now - 60_000),
    });
    const history = [a, b].map((m) => [String(m.messageId), m.enqueuedTimeUtc?.getTime() ?? 0] as const);
    const queue = fakeDeadLetterQueue([a, b], { windowMs: 600_000, now: () => now, history });
    const reports = await resubmitDeadLetters(contextOf(queue), { targets: [], all: true }, false, policy);
    expect(reports.map((r) => r.outcome)).toEqual(['resubmitted', 'resubmitted']);
    expect(queue.dropped).toEqual([]);
    expect(new Set(queue.sent.map(consumerKeyOf))).toEqual(new Set(['shop-a|evt-1', 'shop-b|evt-1']));
  });

  // A sender who knows the tool's conventions sends `<MessageId>~resubmit-1` ahead of the operator:
  // a predictable copy id would be dropped by the broker as that message's duplicate.
  it("loses no message whose copy's MessageId a sender sent first", async () => {
    const original = deadLettered({ messageId: 'pay-1', enqueuedTimeUtc: new Date(now - 60_000) });
    const history = [['pay-1', now - 60_000] as const, ['pay-1~resubmit-1', now - 1_000] as const];
    const queue = fakeDeadLetterQueue([original], { windowMs: 600_000, now: () => now, history });
    const reports = await resubmitDeadLetters(contextOf(queue), { targets: ['pay-1'], all: false }, false, policy);
    expect(reports.map((r) => r.outcome)).toEqual(['resubmitted']);
    expect(queue.dropped).toEqual([]);
    expect(queue.sent.map(consumerKeyOf)).toEqual(['pay-1']);
    expect(String(queue.sent[0]?.messageId)).toMatch(/^pay-1~resubmit-1-[0-9a-f]{12}$/);
  });

  // Found by a review: an edit-resubmit checked only the store for the original's key. A plain
  // resubmit that died between the send of its copy and the removal of the original left that copy,
  // under the original's key, waiting in the queue; the edit then sent a second message for the same
  // request under a new key (the paymentId claim made whichever came second a conflict, and a message
  // type with no business identity would have applied both).
  it('refuses an edit while a copy that a resubmit sent, and died before removing the original, may still be waiting', async () => {
    const queue = fakeDeadLetterQueue([deadLettered()]);
    const ctx = contextOf(queue);
    const crashed = await resubmitDeadLetters(ctx, { targets: ['pay-1'], all: false }, false, policy, {
      afterSend: () => {
        throw new Error('the process died here');
      },
    });
    expect(crashed).toMatchObject([{ outcome: 'failed' }]);
    queue.expireLocks();
    const edit = await editAndResubmit(ctx, 'pay-1', async () => ({ ...payment, amount: 8 }));
    expect(edit).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('orders holds a message under the same key (sequence number 100001') });
    expect(new Set(queue.sent.map(consumerKeyOf))).toEqual(new Set(['pay-1']));
  });
});
