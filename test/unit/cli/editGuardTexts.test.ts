import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import type { SubscriptionRoute } from '../../../src/cli/copyDelivery.js';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { routeEditedCopy } from '../../../src/cli/editRouting.js';
import { parkedUnderKey } from '../../../src/cli/parkedUnderKey.js';
import { deadLetterStop, findBounded, parseScanMax, scanStops } from '../../../src/cli/scanBound.js';
import { describeFound, messagesUnderKey, othersUnderKey } from '../../../src/cli/sameKeyMessages.js';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import { leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { loadQueueFile } from '../../../emulators/servicebus-emulator/index.js';

// What an operator reads when the tool refuses an edit or stops a scan: the whole sentence, since it
// is what they act on (which message to wait for or purge, which bound to raise).

/** An entity holding these messages (sequence number, MessageId, key in `idempotency-key`), one page at a time. */
function entity(messages: readonly { seq?: number; id?: string; key?: string }[], pageSize = 250): ServiceBusReceiver & { peeks: number } {
  const all = messages.map(
    (m) =>
      ({
        sequenceNumber: m.seq === undefined ? undefined : Long.fromNumber(m.seq),
        messageId: m.id,
        body: {},
        applicationProperties: m.key === undefined ? {} : { 'idempotency-key': m.key },
      }) as ServiceBusReceivedMessage,
  );
  const receiver = {
    peeks: 0,
    peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) => {
      receiver.peeks += 1;
      const from = options?.fromSequenceNumber?.toNumber() ?? 0;
      return all.filter((m) => (m.sequenceNumber?.toNumber() ?? 0) >= from).slice(0, Math.min(max, pageSize));
    },
    close: async () => undefined,
  };
  return receiver as unknown as ServiceBusReceiver & { peeks: number };
}

const ctxOf = (active: ServiceBusReceiver | undefined, deadLetters: ServiceBusReceiver): DlqContext => ({
  receiver: deadLetters,
  active,
  sender: () => {
    throw new Error('nothing is sent by a look');
  },
  entityPath: 'orders',
  duplicateDetectionWindowMs: 600_000,
  now: () => 0,
  out: { line: () => undefined, progress: () => undefined },
});

describe("the edit's looks", () => {
  it('names one message waiting in the entity, in full', async () => {
    const found = await othersUnderKey(ctxOf(entity([{ seq: 9, id: 'pay-1-again', key: 'k-1' }]), entity([{ seq: 3, key: 'k-1' }])), ['k-1'], '3');
    expect(found).toBe(
      'orders holds a message under the same key (sequence number 9 (MessageId "pay-1-again")), such as a copy a resubmit sent before it died: an edited copy under a new key would add a second effect beside it. Wait until it is processed (then the original is a duplicate) or dead-lettered (then edit one of them, after removing the others)',
    );
  });

  it('counts several waiting messages, names the first five and how many more, and names both keys of an edit of an edit', async () => {
    const waiting = [1, 2, 3, 4, 5, 6, 7].map((seq) => ({ seq, id: `m-${seq}`, key: seq % 2 === 0 ? 'k-1' : 'k-1~edit-1' }));
    const found = await othersUnderKey(ctxOf(entity(waiting), entity([])), ['k-1~edit-1', 'k-1'], '99');
    expect(found).toMatch(
      /^orders holds 7 messages under the same key \(sequence number 1 \(MessageId "m-1"\), sequence number 2 \(MessageId "m-2"\), sequence number 3 \(MessageId "m-3"\), sequence number 4 \(MessageId "m-4"\), sequence number 5 \(MessageId "m-5"\) and 2 more\), such as/,
    );
    const bounded = await othersUnderKey(ctxOf(entity([]), entity([])), ['k-1~edit-1', 'k-1'], '99');
    expect(bounded).toBeUndefined();
  });

  it('names one other dead letter, and several, with what to do about them', async () => {
    const one = await othersUnderKey(
      ctxOf(
        entity([]),
        entity([
          { seq: 3, key: 'k-1' },
          { seq: 4, key: 'k-1' },
        ]),
      ),
      ['k-1'],
      '3',
    );
    expect(one).toBe(
      "the dead-letter queue holds another message under the same key (sequence number 4): an edit replaces the key, and a later resubmit of it would add the original's effect beside the edited one. Purge it first (the purge exports what it removes), then edit",
    );
    const two = await othersUnderKey(
      ctxOf(
        entity([]),
        entity([
          { seq: 3, key: 'k-1' },
          { seq: 4, key: 'k-1' },
          { seq: 5, key: 'k-1' },
        ]),
      ),
      ['k-1'],
      '3',
    );
    expect(two).toBe(
      "the dead-letter queue holds 2 other messages under the same key (sequence number 4, sequence number 5): an edit replaces the key, and a later resubmit of them would add the original's effect beside the edited one. Purge them first (the purge exports what it removes), then edit",
    );
  });

  it('looks in the entity and the dead-letter queue twice each, no more, when it finds nothing', async () => {
    const active = entity([]);
    const deadLetters = entity([{ seq: 3, key: 'k-1' }]);
    expect(await othersUnderKey(ctxOf(active, deadLetters), ['k-1'], '3')).toBeUndefined();
    expect([active.peeks, deadLetters.peeks]).toEqual([2, 4]);
  });

  it('refuses in full without a receiver on the entity, when the dead-letter queue cannot be read, and past the bound', async () => {
    expect(await othersUnderKey(ctxOf(undefined, entity([])), ['k-1', 'k-2'], '3')).toBe(
      'the tool cannot look in orders for another message under key "k-1" or "k-2": nothing sent',
    );
    const broken = { peekMessages: () => Promise.reject(new Error('the link was closed')), close: async () => undefined } as unknown as ServiceBusReceiver;
    expect(await othersUnderKey(ctxOf(entity([]), broken), ['k-1'], '3')).toBe(
      'the tool could not look in the dead-letter queue of orders for another message under key "k-1" (the link was closed): nothing sent',
    );
    const deep = Array.from({ length: 100_001 }, (_, i) => ({ seq: i + 1, key: `other-${i}` }));
    expect(await othersUnderKey(ctxOf(entity(deep), entity([])), ['k-1'], '3')).toBe(
      'orders holds more than 100000 messages, so the tool cannot tell whether one under key "k-1" waits there: nothing sent; edit it when the queue has drained',
    );
    expect(await othersUnderKey(ctxOf(entity([]), entity(deep)), ['k-1'], '3')).toBe(
      'the dead-letter queue holds more than 100000 messages, so the tool cannot tell whether another one is under key "k-1": nothing sent',
    );
  });

  it('matches a key exactly (not a part of it), and reads a message without a sequence number or MessageId', async () => {
    const receiver = entity([
      { id: undefined, key: 'k-1' },
      { seq: 2, id: 'm-2', key: 'k' },
    ]);
    expect(await messagesUnderKey(receiver, 'k-10')).toEqual({ kind: 'read', found: [] });
    expect(await messagesUnderKey(receiver, 'k-1')).toEqual({ kind: 'read', found: [{ sequenceNumber: 0, messageId: undefined }] });
  });

  it('shows five messages without "more", and at most 128 characters of a MessageId', () => {
    const five = [1, 2, 3, 4, 5].map((n) => ({ sequenceNumber: n }));
    expect(describeFound(five)).toBe('sequence number 1, sequence number 2, sequence number 3, sequence number 4, sequence number 5');
    expect(describeFound([{ sequenceNumber: 1, messageId: 'x'.repeat(200) }])).toBe(`sequence number 1 (MessageId "${'x'.repeat(128)}")`);
  });
});

/** The rules of infra/servicebus-queues.json for a subscription, as the rule manager lists them. */
function routeOf(subscription: string): SubscriptionRoute {
  const rules = Object.entries(loadQueueFile().topics['order-events']?.subscriptions[subscription]?.rules ?? {}).map(([name, rule]) => ({
    name,
    filter: 'sqlFilter' in rule ? { sqlExpression: rule.sqlFilter } : rule.correlationFilter,
  }));
  return { topic: 'order-events', subscription, rules };
}

describe("an edit's routing", () => {
  const copy = { messageId: 'pay-1~edit-1', body: {}, applicationProperties: { 'idempotency-key': 'pay-1~edit-1' } };

  it('sends a queue message as it is, and a subscription message addressed to it, saying by which rule', () => {
    expect(routeEditedCopy({}, copy)).toEqual({ kind: 'routed', copy, detail: '' });
    expect(routeEditedCopy({ resubmitTo: 'fulfilment' }, copy)).toEqual({ kind: 'routed', copy: { ...copy, to: 'fulfilment' }, detail: '' });
    expect(routeEditedCopy({ route: routeOf('fulfilment'), resubmitTo: 'fulfilment' }, copy)).toEqual({
      kind: 'routed',
      copy: { ...copy, to: 'fulfilment' },
      detail: '; to fulfilment, taken by rule retries of fulfilment',
    });
  });

  it('refuses in full where only a copy addressed to nobody would reach the subscription', () => {
    expect(routeEditedCopy({ route: routeOf('audit'), resubmitTo: 'audit' }, copy)).toEqual({
      kind: 'refused',
      why: "not sent: order-events/subscriptions/audit takes a copy only addressed to nobody (rule events), so every subscription of order-events would get it, and an edited copy travels under a new key none of them has seen: each would apply it. Give order-events/subscriptions/audit a rule taking sys.To = 'audit', or correct the message at its producer",
    });
  });
});

describe('the scan bound', () => {
  it('takes 1 to 1000000, spaces around allowed, and refuses the rest naming what it got', () => {
    expect([parseScanMax('1'), parseScanMax(' 1000000 '), parseScanMax('250')]).toEqual([1, 1_000_000, 250]);
    for (const text of ['0', '1000001', '-1', '1e3', '', 'ten'])
      expect(() => parseScanMax(text), text).toThrow(`--scan-max "${text}" is not a whole number from 1 to 1000000`);
  });

  it('names the option that moves a stop: --max for rows, --scan-max for messages', () => {
    expect(deadLetterStop('orders', 5, ' rows')).toEqual({
      what: 'orders/$deadletterqueue',
      after: 5,
      unit: ' rows',
      order: 'in sequence order',
      option: '--max',
    });
    expect(deadLetterStop('orders', 5)).toMatchObject({ unit: ' messages', option: '--scan-max' });
    const lines: string[] = [];
    const stops = scanStops((l) => lines.push(l), 'the rest is not listed', 'or narrow the filter');
    stops.stopped(deadLetterStop('orders', 5, ' rows'));
    expect(stops.truncated).toEqual(['orders/$deadletterqueue: stopped after 5 rows']);
    expect(lines).toEqual([
      'warning: orders/$deadletterqueue: stopped after 5 rows (in sequence order): the rest is not listed; raise --max, or narrow the filter',
    ]);
  });

  it('stops a stored read only when there is more than the bound, and says so once', async () => {
    const store = new InMemoryDocumentStore();
    for (const n of [1, 2, 3]) await store.commit('p', [create({ id: `d-${n}`, docType: 'parked', n } as never)]);
    const stopped: unknown[] = [];
    const bound = (scanMax: number) => ({ scanMax, stopped: (s: unknown) => void stopped.push(s) });
    expect(await findBounded(store, 'parked items', { docType: 'parked' }, bound(3))).toHaveLength(3);
    expect(stopped).toEqual([]);
    expect(await findBounded(store, 'parked items', { docType: 'parked' }, bound(2))).toHaveLength(2);
    expect(stopped).toEqual([{ what: 'parked items', after: 2, unit: '', order: 'oldest first', option: '--scan-max' }]);
  });
});

describe('a parked copy under the key', () => {
  it('is found under its own key only, in the orders named, and not once it is applied', async () => {
    const t = orderFlow();
    await leftParked(t, 'o1', 'other-key', 'PaymentReceived', {
      orderId: 'o1',
      paymentId: 'p-9',
      amount: 1,
      currency: 'USD',
      receivedAt: '2026-11-30T09:00:00Z',
    });
    expect(await parkedUnderKey(t.store, 'k-1', ['o1', undefined])).toBeUndefined();
    const id = await leftParked(t, 'o1', 'k-1', 'PaymentReceived', {
      orderId: 'o1',
      paymentId: 'p-1',
      amount: 1,
      currency: 'USD',
      receivedAt: '2026-11-30T09:00:00Z',
    });
    expect(await parkedUnderKey(t.store, 'k-1', ['o2'])).toBeUndefined();
    expect(await parkedUnderKey(t.store, 'k-1', [undefined, 'o1', 'o1'])).toBe(
      `a message under the same key is parked (${id}, parked) in order "o1": it is applied when the order comes (or when a parked resubmit sends it), and an edited copy under a new key would add a second effect beside it. Let it apply (then the original is a duplicate), or discard it (dlq parked discard) first`,
    );
  });
});
