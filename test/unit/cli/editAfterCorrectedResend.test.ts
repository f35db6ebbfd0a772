import Long from 'long';
import { describe, expect, it } from 'vitest';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { editAndResubmit } from '../../../src/cli/editResubmit.js';
import { fakeDeadLetterQueue } from '../../support/fakeDeadLetterQueue.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

describe('edit-resubmit of a dead letter whose producer already sent a corrected copy', () => {
  // Holds, by the payment's claim, not by the tool: the store check finds the original's rejection
  // record and calls it `invalid` without looking for an effect under its key, so the edit goes.
  it('absorbs an edit that repeats the corrected copy the producer already sent, so the payment is applied once', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const bad = { ...paymentReceived('o1', { paymentId: 'p-1', amount: 5 }), currency: 'XXX' };
    const corrected = paymentReceived('o1', { paymentId: 'p-1', amount: 5 });
    expect((await t.send('pay-1', 'PaymentReceived', bad)).outcome).toMatchObject({ kind: 'invalid' });
    t.advance(3600);
    // The producer fixes its bug and sends the payment again under its key: applied.
    expect((await t.send('pay-1', 'PaymentReceived', corrected)).outcome).toMatchObject({ kind: 'created' });

    const queue = fakeDeadLetterQueue([
      {
        sequenceNumber: Long.fromNumber(3),
        messageId: 'pay-1',
        subject: 'PaymentReceived',
        body: bad,
        applicationProperties: {},
        enqueuedTimeUtc: t.ctx.now(),
      },
    ]);
    const ctx: DlqContext = {
      receiver: queue.receiver,
      active: queue.active,
      sender: () => queue.sender,
      entityPath: 'orders',
      store: t.store,
      duplicateDetectionWindowMs: 600_000,
      now: () => t.ctx.now().getTime(),
      out: { line: () => undefined, progress: () => undefined },
    };
    // The operator, not knowing, corrects the dead letter the same way.
    const report = await editAndResubmit(ctx, 'pay-1', async () => corrected);
    const outcomes = [];
    for (const copy of queue.sent)
      outcomes.push((await t.send(String(copy.messageId), 'PaymentReceived', copy.body, 1, copy.applicationProperties as Record<string, string>)).outcome);

    expect((await t.order('o1'))?.amountPaid).toBe(5);
    expect(report).toMatchObject({ outcome: 'resubmitted', copyMessageId: 'pay-1~edit-1' });
    expect(outcomes).toEqual([{ kind: 'duplicate' }]);
  });
});
