import Long from 'long';
import { describe, expect, it } from 'vitest';
import type { SubscriptionRoute } from '../../../src/cli/copyDelivery.js';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { editAndResubmit } from '../../../src/cli/editResubmit.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { loadQueueFile } from '../../../emulators/servicebus-emulator/index.js';
import { fakeDeadLetterQueue } from '../../support/fakeDeadLetterQueue.js';

// An edited copy of a subscription's dead letter goes to the topic: where the topic delivers it decides who applies it.
const payment = { orderId: 'o-1', paymentId: 'p-1', amount: 12, currency: 'USD', receivedAt: '2026-11-30T09:00:00Z' };
const edited = { ...payment, currency: 'EUR' };

/** The rules of infra/servicebus-queues.json, as the rule manager lists them. */
function routeOf(subscription: string): SubscriptionRoute {
  const rules = Object.entries(loadQueueFile().topics['order-events']?.subscriptions[subscription]?.rules ?? {}).map(([name, rule]) => ({
    name,
    filter: 'sqlFilter' in rule ? { sqlExpression: rule.sqlFilter } : rule.correlationFilter,
  }));
  return { topic: 'order-events', subscription, rules };
}

function subscriptionDeadLetter(route: SubscriptionRoute) {
  const queue = fakeDeadLetterQueue([
    {
      sequenceNumber: Long.fromNumber(7),
      messageId: 'pay-1',
      subject: 'PaymentReceived',
      contentType: 'application/json',
      body: payment,
      applicationProperties: {},
    },
  ]);
  const ctx: DlqContext = {
    receiver: queue.receiver,
    active: queue.active,
    sender: () => queue.sender,
    entityPath: `order-events/subscriptions/${route.subscription}`,
    resubmitTo: route.subscription,
    route,
    store: new InMemoryDocumentStore(),
    duplicateDetectionWindowMs: 600_000,
    now: () => Date.parse('2026-12-04T10:00:00Z'),
    out: { line: () => undefined, progress: () => undefined },
  };
  return { queue, ctx };
}

describe('resubmit --edit of a topic subscription dead letter', () => {
  it('addresses the copy to that subscription alone (its retries rule), as a plain resubmit does', async () => {
    const { queue, ctx } = subscriptionDeadLetter(routeOf('fulfilment'));
    const report = await editAndResubmit(ctx, 'pay-1', async () => edited);
    expect(report).toMatchObject({
      outcome: 'resubmitted',
      copyMessageId: 'pay-1~edit-1',
      detail: expect.stringContaining('taken by rule retries of fulfilment'),
    });
    expect(queue.sent).toEqual([expect.objectContaining({ messageId: 'pay-1~edit-1', to: 'fulfilment', body: edited })]);
    expect(queue.remaining()).toEqual([]);
  });

  it('refuses, leaving the original, when only a copy addressed to nobody reaches the subscription: every subscription would take the new key', async () => {
    const { queue, ctx } = subscriptionDeadLetter(routeOf('audit'));
    const report = await editAndResubmit(ctx, 'pay-1', async () => edited);
    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringMatching(/every subscription of order-events.*new key/) });
    expect(queue.sent).toEqual([]);
    expect(queue.remaining()).toHaveLength(1);
  });

  it('refuses, as a plain resubmit does, when no rule of the subscription takes the copy', async () => {
    const route = { topic: 'order-events', subscription: 'fulfilment', rules: [{ name: 'only-paid', filter: { sqlExpression: "sys.Label = 'OrderPaid'" } }] };
    const { queue, ctx } = subscriptionDeadLetter(route);
    const report = await editAndResubmit(ctx, 'pay-1', async () => edited);
    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('no rule of order-events/subscriptions/fulfilment takes the copy') });
    expect(queue.sent).toEqual([]);
  });

  it('a dry run names the subscription the copy would go to', async () => {
    const { queue, ctx } = subscriptionDeadLetter(routeOf('fulfilment'));
    const report = await editAndResubmit(ctx, 'pay-1', async () => edited, true);
    expect(report).toMatchObject({ outcome: 'would-resubmit', detail: expect.stringContaining('to fulfilment, taken by rule retries') });
    expect(queue.sent).toEqual([]);
  });
});
