import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { resubmitDeadLetters } from '../../../src/cli/dlqCommands.js';
import { editAndResubmit } from '../../../src/cli/editResubmit.js';
import type { ResubmitPolicy } from '../../../src/cli/resubmitHorizon.js';
import { maxMessagesLookedAt, messagesUnderKey } from '../../../src/cli/sameKeyMessages.js';
import { replace } from '../../../src/idempotency/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { fakeDeadLetterQueue } from '../../support/fakeDeadLetterQueue.js';
import type { DeadLetterSeed } from '../../support/fakeDeadLetterQueue.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { floodedQueue } from '../../support/floodedQueue.js';

// An edit sends the corrected body under a key of its own (`<key>~edit-<n>`): any other message left
// under the original's key, in the queue or in its dead-letter queue, would apply the original's
// effect beside the edited one. The tool looks in both before it sends.
const payment = paymentReceived('o1', { paymentId: 'p-1', amount: 5 });
const policy: ResubmitPolicy = { retention: { markerTtlSeconds: 30 * 86_400, marginSeconds: 86_400, marginExplanation: 'one day' } };

function setUp(seeds: DeadLetterSeed[]) {
  const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
  const queue = fakeDeadLetterQueue(seeds);
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
  return { t, queue, ctx };
}

const deadLetter = (sequenceNumber: number, messageId: string, properties: Record<string, string> = {}): DeadLetterSeed => ({
  sequenceNumber: Long.fromNumber(sequenceNumber),
  messageId,
  subject: 'PaymentReceived',
  contentType: 'application/json',
  body: payment,
  applicationProperties: properties,
  enqueuedTimeUtc: new Date('2026-12-03T12:00:00Z'),
  deadLetterReason: 'MaxDeliveryCountExceeded',
});

/** The consumer takes a waiting copy and completes it, as the Functions host would. */
async function processWaiting(t: ReturnType<typeof setUp>['t'], queue: ReturnType<typeof setUp>['queue'], copy: ServiceBusReceivedMessage) {
  const result = await t.send(String(copy.messageId), String(copy.subject), copy.body, 1, copy.applicationProperties as Record<string, string>);
  queue.processed(copy);
  return result;
}

describe('an edit while another message carries the original key', () => {
  it("refuses while a producer's re-send under the key (another MessageId) waits in the queue, and is refused by the store once that re-send is applied", async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1', { 'idempotency-key': 'shop|p-1' })]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await queue.sender.sendMessages({
      messageId: 'pay-1-resent',
      subject: 'PaymentReceived',
      body: payment,
      applicationProperties: { 'idempotency-key': 'shop|p-1' },
    });

    const waiting = await editAndResubmit(ctx, 'pay-1', async () => ({ ...payment, amount: 6 }));
    expect(waiting).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('(sequence number 100001 (MessageId "pay-1-resent"))') });
    expect(queue.sent.map((m) => m.messageId)).toEqual(['pay-1-resent']);

    await processWaiting(t, queue, queue.waiting()[0] as ServiceBusReceivedMessage);
    const applied = await editAndResubmit(ctx, 'pay-1', async () => ({ ...payment, amount: 6 }));
    expect(applied).toMatchObject({ outcome: 'refused', detail: expect.stringContaining("the original's key already has an effect (processed") });
    expect((await t.order('o1'))?.amountPaid).toBe(5);
  });

  // The look comes before the store read: a copy that the consumer applies and completes while the
  // tool looks has its effect in the store by then. Read the other way round (store, then queue), the
  // store showed nothing, the queue was empty, and the edit added a second payment.
  it('finds in the store a copy the consumer applies and completes while the tool looks in the queue', async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1')]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await queue.sender.sendMessages({ messageId: 'pay-1', subject: 'PaymentReceived', body: payment, applicationProperties: {} });
    queue.hooks.beforePeek = async () => {
      queue.hooks.beforePeek = undefined;
      await processWaiting(t, queue, queue.waiting()[0] as ServiceBusReceivedMessage);
    };

    const report = await editAndResubmit(ctx, 'pay-1', async () => ({ ...payment, paymentId: 'p-2', amount: 6 }));

    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining("the original's key already has an effect") });
    expect(queue.sent.map((m) => m.messageId)).toEqual(['pay-1']);
    expect((await t.order('o1'))?.paymentCount).toBe(1);
  });

  it('refuses while another dead letter carries the key, which a later resubmit would send; once the operator resubmits that one instead, the store refuses the edit', async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1'), deadLetter(4, 'pay-1', { 'cloned-by': 'producer' })]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));

    const refused = await editAndResubmit(ctx, '3', async () => ({ ...payment, amount: 6 }));
    expect(refused).toMatchObject({
      outcome: 'refused',
      detail: expect.stringContaining('the dead-letter queue holds another message under the same key (sequence number 4'),
    });
    expect(queue.sent).toEqual([]);

    await resubmitDeadLetters(ctx, { targets: ['4'], all: false }, false, policy, {}); // the operator takes the other one first
    await processWaiting(t, queue, queue.waiting()[0] as ServiceBusReceivedMessage);
    const afterIt = await editAndResubmit(ctx, '3', async () => ({ ...payment, amount: 6 }));
    expect(afterIt).toMatchObject({ outcome: 'refused', detail: expect.stringContaining("the original's key already has an effect") });
  });

  // Another operator (or a bulk `resubmit --all` in another terminal) resubmits a second dead letter
  // under the key between the tool's look in the entity and its look in the dead-letter queue: the
  // resubmit moves the message backwards (dead-letter queue -> entity), sending its copy before it
  // removes it. The entity was looked at before the copy came, the dead-letter queue after the
  // message left, and the store before the copy was processed: the edit was sent, and both applied.
  it("refuses when another operator resubmits a dead letter under the key after the tool's look in the entity", async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1'), deadLetter(4, 'pay-1', { 'cloned-by': 'producer' })]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    let otherOperator: Promise<unknown> | undefined;
    const active = {
      ...queue.active,
      peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) => {
        const page = await queue.active.peekMessages(max, options);
        // The tool's look in the entity has reached its end: the other operator's resubmit runs now.
        if (page.length === 0 && otherOperator === undefined) {
          otherOperator = resubmitDeadLetters(ctx, { targets: ['4'], all: false }, false, policy, {});
          await otherOperator;
        }
        return page;
      },
    } as unknown as ServiceBusReceiver;

    const report = await editAndResubmit({ ...ctx, active }, '3', async () => ({ ...payment, paymentId: 'p-2', amount: 6 }));
    for (const copy of queue.waiting()) await processWaiting(t, queue, copy);

    expect(otherOperator).toBeDefined();
    expect((await t.order('o1'))?.paymentCount).toBe(1);
    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('under the same key') });
  });

  // The same resubmit, and its copy dead-lettered again (the consumer refused it) after the first look
  // in the dead-letter queue and before the second look in the entity: only a second look in the
  // dead-letter queue finds it, a dead letter under the key that a later resubmit would send beside the edit.
  it("refuses when another operator's copy is dead-lettered again between the tool's looks", async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1'), deadLetter(4, 'pay-1', { 'cloned-by': 'producer' })]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    let entityLooks = 0;
    let deadLetterLooks = 0;
    const active = {
      ...queue.active,
      peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) => {
        const page = await queue.active.peekMessages(max, options);
        if (page.length === 0 && ++entityLooks === 1) await resubmitDeadLetters(ctx, { targets: ['4'], all: false }, false, policy, {});
        return page;
      },
    } as unknown as ServiceBusReceiver;
    const receiver = {
      ...queue.receiver,
      peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) => {
        const page = await queue.receiver.peekMessages(max, options);
        // The first look for others in the dead-letter queue has reached its end (finding the target stopped at it, short of the end).
        if (page.length === 0 && ++deadLetterLooks === 1) queue.deadLettered(queue.waiting()[0] as ServiceBusReceivedMessage);
        return page;
      },
    } as unknown as ServiceBusReceiver;

    const report = await editAndResubmit({ ...ctx, active, receiver }, '3', async () => ({ ...payment, paymentId: 'p-2', amount: 6 }));

    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('the dead-letter queue holds another message under the same key') });
    expect([entityLooks, deadLetterLooks]).toEqual([2, 2]);
    expect(queue.sent).toHaveLength(1); // the other operator's copy, nothing of the edit
  });

  // A copy under the key that arrives before its order is parked (its effect deferred, stored as a
  // parked item) and leaves the queue: the store holds it, but not as an inbox marker, so the store
  // said "not applied" and the edit was sent; once the order came, both payments were applied.
  it('refuses while a copy under the key is parked, waiting for its order', async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1')]);
    await queue.sender.sendMessages({ messageId: 'pay-1', subject: 'PaymentReceived', body: payment, applicationProperties: {} });
    expect(await processWaiting(t, queue, queue.waiting()[0] as ServiceBusReceivedMessage)).toMatchObject({ outcome: { kind: 'parked' } });

    const report = await editAndResubmit(ctx, '3', async () => ({ ...payment, paymentId: 'p-2', amount: 6 }));
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    for (const copy of queue.waiting()) await processWaiting(t, queue, copy);

    expect((await t.order('o1'))?.paymentCount).toBe(1);
    expect(report).toMatchObject({ outcome: 'refused' });
  });

  // The original's body may not parse (often why it is edited): the order is read from what it names, else from the edited body.
  it.each([
    ['rejected', 'whose amount is not a number, edited onto another order', { ...payment, amount: 'five' }, 'o2'],
    ['resubmitting', 'that names no order', { ...payment, orderId: undefined }, 'o1'],
  ] as const)(
    'refuses while a parked copy under the key is %s (a parked resubmit may still send it), for an original %s',
    async (state, _why, broken, editedOrder) => {
      const { t, queue, ctx } = setUp([{ ...deadLetter(3, 'pay-1'), body: broken }]);
      await queue.sender.sendMessages({ messageId: 'pay-1', subject: 'PaymentReceived', body: payment, applicationProperties: {} });
      await processWaiting(t, queue, queue.waiting()[0] as ServiceBusReceivedMessage);
      const [item] = await t.store.find<ParkedItemDocument>({ docType: 'parked', partitionKey: 'o1' });
      const changed: ParkedItemDocument = { ...(item?.document as ParkedItemDocument), state };
      await t.store.commit('o1', [replace(changed, item?.etag as string)]);

      const report = await editAndResubmit(ctx, '3', async () => ({ ...payment, orderId: editedOrder, paymentId: 'p-2', amount: 6 }));

      expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining(`is parked (parked|payment|pay-1, ${state}) in order "o1"`) });
      expect(queue.sent.map((m) => m.messageId)).toEqual(['pay-1']);
    },
  );

  it('sends the edit when the parked copy under the key was discarded', async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1')]);
    await queue.sender.sendMessages({ messageId: 'pay-1', subject: 'PaymentReceived', body: payment, applicationProperties: {} });
    await processWaiting(t, queue, queue.waiting()[0] as ServiceBusReceivedMessage);
    const [item] = await t.store.find<ParkedItemDocument>({ docType: 'parked', partitionKey: 'o1' });
    const discarded: ParkedItemDocument = { ...(item?.document as ParkedItemDocument), state: 'discarded' };
    await t.store.commit('o1', [replace(discarded, item?.etag as string)]);

    expect(await editAndResubmit(ctx, '3', async () => ({ ...payment, amount: 6 }))).toMatchObject({ outcome: 'resubmitted' });
  });

  // An edit of an edit is keyed from the first original (`<root>~edit-<n+1>`), and the request it
  // stands for is the root's. A producer's late re-send under the root key (after the first edit's
  // look) applied the root's effect; the store was asked only about the dead letter's own key
  // (`<root>~edit-1`, never applied), and the second edit added a second payment.
  it("refuses an edit of an edit once the first original's key has an effect", async () => {
    const edited = { ...payment, paymentId: 'p-2', amount: 6 };
    const { t, queue, ctx } = setUp([
      {
        ...deadLetter(3, 'pay-1~edit-1', { 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1' }),
        body: edited,
        applicationProperties: { 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1', 'edit-count': 1 },
      },
    ]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await t.send('pay-1', 'PaymentReceived', payment); // the producer's late re-send under the root key

    const report = await editAndResubmit(ctx, '3', async () => ({ ...payment, paymentId: 'p-3', amount: 7 }));
    for (const copy of queue.waiting()) await processWaiting(t, queue, copy);

    expect((await t.order('o1'))?.paymentCount).toBe(1);
    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('pay-1') });
  });

  it("refuses an edit of an edit while a message under the first original's key waits in the queue, and sends it once none does", async () => {
    const edited = { ...payment, paymentId: 'p-2', amount: 6 };
    const editOne = { 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1', 'edit-count': 1 };
    const { t, queue, ctx } = setUp([{ ...deadLetter(3, 'pay-1~edit-1'), body: edited, applicationProperties: editOne }]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));

    expect(await editAndResubmit(ctx, '3', async () => ({ ...payment, paymentId: 'p-3', amount: 7 }), true)).toMatchObject({
      outcome: 'would-resubmit',
      copyMessageId: 'pay-1~edit-2',
    });
    await queue.sender.sendMessages({ messageId: 'pay-1', subject: 'PaymentReceived', body: payment, applicationProperties: {} });
    const waiting = await editAndResubmit(ctx, '3', async () => ({ ...payment, paymentId: 'p-3', amount: 7 }));
    expect(waiting).toMatchObject({
      outcome: 'refused',
      detail: expect.stringContaining('orders holds a message under the same key (sequence number 100001 (MessageId "pay-1"))'),
    });
  });

  it('sends the edit when nothing else carries the key, and names none of the messages under other keys', async () => {
    const { t, queue, ctx } = setUp([deadLetter(3, 'pay-1'), deadLetter(4, 'pay-2')]);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await queue.sender.sendMessages({ messageId: 'pay-3', subject: 'PaymentReceived', body: payment, applicationProperties: {} });

    const report = await editAndResubmit(ctx, '3', async () => ({ ...payment, amount: 6 }));

    expect(report).toMatchObject({ outcome: 'resubmitted', copyMessageId: 'pay-1~edit-1' });
  });

  it('refuses without a receiver on the entity, since it cannot look', async () => {
    const { queue, ctx } = setUp([deadLetter(3, 'pay-1')]);
    const report = await editAndResubmit({ ...ctx, active: undefined }, '3', async () => ({ ...payment, amount: 6 }));
    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('cannot look in orders') });
    expect(queue.sent).toEqual([]);
  });

  it('refuses, naming why, when the entity cannot be peeked (a session subscription, a broker that refuses)', async () => {
    const { queue, ctx } = setUp([deadLetter(3, 'pay-1')]);
    const unreadable = {
      peekMessages: () => Promise.reject(new Error('It is not possible for an entity that requires sessions to create a non-sessionful message receiver.')),
      close: async () => undefined,
    } as unknown as ServiceBusReceiver;
    const report = await editAndResubmit({ ...ctx, active: unreadable }, '3', async () => ({ ...payment, amount: 6 }));
    expect(report).toMatchObject({
      outcome: 'refused',
      detail: expect.stringContaining('the tool could not look in orders for another message under key "pay-1" (It is not possible'),
    });
    expect(queue.sent).toEqual([]);
  });

  it('refuses when the queue holds more messages than one look reads', async () => {
    const { queue, ctx } = setUp([deadLetter(3, 'pay-1')]);
    const report = await editAndResubmit(
      { ...ctx, active: floodedQueue(Number.MAX_SAFE_INTEGER, undefined, Number.MAX_SAFE_INTEGER).receiver },
      '3',
      async () => ({ ...payment, amount: 6 }),
    );
    expect(report).toMatchObject({ outcome: 'refused', detail: expect.stringContaining(`orders holds more than ${maxMessagesLookedAt} messages`) });
    expect(queue.sent).toEqual([]);
  });

  it('finds its target without reading the rest of the dead-letter queue, and looks no further than the bound', async () => {
    const { ctx } = setUp([]);
    let pages = 0;
    const counted = (inner: ServiceBusReceiver) =>
      ({ ...inner, peekMessages: (max: number, o?: { fromSequenceNumber?: Long }) => ((pages += 1), inner.peekMessages(max, o)) }) as ServiceBusReceiver;
    const deep = counted(floodedQueue(Number.MAX_SAFE_INTEGER, undefined, Number.MAX_SAFE_INTEGER).receiver);
    const missing = await editAndResubmit({ ...ctx, receiver: deep }, 'no-such-message', async () => payment);
    expect(missing).toBeUndefined();
    expect(pages).toBe(maxMessagesLookedAt / 250);
    pages = 0;
    const early = await editAndResubmit(
      { ...ctx, receiver: counted(floodedQueue(Number.MAX_SAFE_INTEGER, undefined, Number.MAX_SAFE_INTEGER).receiver), active: floodedQueue(0).receiver },
      'm-2',
      async () => payment,
    );
    expect(early?.sequenceNumber).toBe(2);
    expect(pages).toBeGreaterThan(1); // the looks read on; finding the target took one page
  });

  it('reads to the end of the entity, past the first pages, and at most the bound', async () => {
    const deep = floodedQueue(600, (n) => (n === 600 ? { messageId: 'pay-1' } : {})).receiver;
    expect(await messagesUnderKey(deep, 'pay-1')).toEqual({ kind: 'read', found: [{ sequenceNumber: 600, messageId: 'pay-1' }] });
    expect(await messagesUnderKey(deep, 'pay-1', { except: '600' })).toEqual({ kind: 'read', found: [] });
    expect(await messagesUnderKey(deep, 'pay-1', { limit: 599 })).toEqual({ kind: 'too-many', read: 599 });
    expect(await messagesUnderKey(deep, 'pay-1', { limit: 600 })).toMatchObject({ kind: 'read' });
  });
});
