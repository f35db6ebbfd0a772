import { randomUUID } from 'node:crypto';
import { ServiceBusAdministrationClient, ServiceBusClient } from '@azure/service-bus';
import type { RuleProperties, ServiceBusReceivedMessage, ServiceBusReceiver, ServiceBusRuleManager } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRule, sqlFilter, startServiceBusEmulator } from '../index.js';
import type { QueueSettings } from '../index.js';

/**
 * Topics and subscriptions, the same behaviours against the emulator and (given
 * SERVICEBUS_CONNECTION_STRING with Manage rights) a real namespace. One topic with:
 * - `all`: the `$Default` rule, every message;
 * - `accepted`: a correlation filter on the subject (`OrderAccepted`);
 * - `big-payments`: a SQL filter over a system and a user property;
 * - `managed`: `$Default` at first; its rules are changed through the rule manager.
 */
interface TopicNames {
  readonly topic: string;
}

interface Target {
  readonly name: string;
  setUp(): Promise<{ connectionString: string; names: TopicNames; tearDown(): Promise<void> }>;
}

const bigPayments = "sys.Label = 'PaymentReceived' AND amount >= 100";
const subscriptionSettings = (overrides: Partial<QueueSettings> = {}): QueueSettings => ({
  lockDurationMs: 30_000,
  maxDeliveryCount: 2,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 0,
  deadLetteringOnMessageExpiration: false,
  ...overrides,
});

const emulatorTarget: Target = {
  name: 'the local emulator',
  async setUp() {
    const emulator = await startServiceBusEmulator({
      port: 0,
      queues: {},
      topics: {
        events: {
          settings: { defaultMessageTimeToLiveMs: 3_600_000, duplicateDetectionWindowMs: 60_000 },
          subscriptions: {
            all: { settings: subscriptionSettings(), rules: [defaultRule] },
            accepted: {
              settings: subscriptionSettings(),
              rules: [{ name: 'accepted', filter: { kind: 'correlation', fields: { subject: 'OrderAccepted' } } }],
            },
            'big-payments': { settings: subscriptionSettings(), rules: [{ name: 'big', filter: sqlFilter(bigPayments) }] },
            managed: { settings: subscriptionSettings(), rules: [defaultRule] },
          },
        },
      },
    });
    return { connectionString: emulator.connectionString, names: { topic: 'events' }, tearDown: () => emulator.close() };
  },
};

const realNamespaceTarget = (connectionString: string): Target => ({
  name: 'the namespace in SERVICEBUS_CONNECTION_STRING',
  async setUp() {
    const admin = new ServiceBusAdministrationClient(connectionString);
    const topic = `contract-events-${randomUUID().slice(0, 8)}`;
    await admin.createTopic(topic, { requiresDuplicateDetection: true, duplicateDetectionHistoryTimeWindow: 'PT1M' });
    await admin.createSubscription(topic, 'all', { maxDeliveryCount: 2 });
    await admin.createSubscription(topic, 'accepted', { maxDeliveryCount: 2, defaultRuleOptions: { name: 'accepted', filter: { subject: 'OrderAccepted' } } });
    await admin.createSubscription(topic, 'big-payments', { maxDeliveryCount: 2, defaultRuleOptions: { name: 'big', filter: { sqlExpression: bigPayments } } });
    await admin.createSubscription(topic, 'managed', { maxDeliveryCount: 2 });
    return { connectionString, names: { topic }, tearDown: async () => void (await admin.deleteTopic(topic)) };
  },
});

const targets: Target[] = [emulatorTarget];
if (process.env.SERVICEBUS_CONNECTION_STRING) targets.push(realNamespaceTarget(process.env.SERVICEBUS_CONNECTION_STRING));
else console.log('Service Bus topic contract suite against a real namespace: skipped because SERVICEBUS_CONNECTION_STRING is not set');

describe.each(targets)('Service Bus topics: $name', (target) => {
  let client: ServiceBusClient;
  let connectionString: string;
  let topic: string;
  let tearDown: () => Promise<void>;
  const receivers = new Map<string, ServiceBusReceiver>();

  beforeAll(async () => {
    const setUp = await target.setUp();
    ({ connectionString, tearDown } = setUp);
    topic = setUp.names.topic;
    client = new ServiceBusClient(connectionString);
    for (const sub of ['all', 'accepted', 'big-payments', 'managed']) receivers.set(sub, client.createReceiver(topic, sub));
  });
  afterAll(async () => {
    await client.close();
    await tearDown();
  });

  const receiverOf = (sub: string) => receivers.get(sub) as ServiceBusReceiver;

  /** Everything a subscription holds now, completed. */
  async function drainIds(sub: string): Promise<string[]> {
    const ids: string[] = [];
    for (
      let got = await receiverOf(sub).receiveMessages(50, { maxWaitTimeInMs: 500 });
      got.length > 0;
      got = await receiverOf(sub).receiveMessages(50, { maxWaitTimeInMs: 300 })
    ) {
      for (const m of got) {
        ids.push(String(m.messageId));
        await receiverOf(sub).completeMessage(m);
      }
    }
    return ids.sort();
  }

  async function receiveOne(r: ServiceBusReceiver): Promise<ServiceBusReceivedMessage> {
    const [m] = await r.receiveMessages(1, { maxWaitTimeInMs: 3000 });
    if (!m) throw new Error('no message arrived');
    return m;
  }

  it('copies a message to every subscription whose rules match: $Default, a correlation filter, a SQL filter', async () => {
    const run = randomUUID().slice(0, 6);
    const sender = client.createSender(topic);
    await sender.sendMessages([
      { messageId: `acc-${run}`, subject: 'OrderAccepted', body: { orderId: 'o-1' } },
      { messageId: `big-${run}`, subject: 'PaymentReceived', body: {}, applicationProperties: { amount: 150 } },
      { messageId: `small-${run}`, subject: 'PaymentReceived', body: {}, applicationProperties: { amount: 20 } },
      { messageId: `noamount-${run}`, subject: 'PaymentReceived', body: {} },
    ]);
    await sender.close();
    expect(await drainIds('all')).toEqual([`acc-${run}`, `big-${run}`, `noamount-${run}`, `small-${run}`].sort());
    expect(await drainIds('accepted')).toEqual([`acc-${run}`]);
    // A missing property is NULL, and NULL >= 100 is unknown: no match.
    expect(await drainIds('big-payments')).toEqual([`big-${run}`]);
  });

  it("drops a copy of a MessageId inside the topic's duplicate-detection window, for every subscription", async () => {
    const id = `dup-${randomUUID().slice(0, 6)}`;
    const sender = client.createSender(topic);
    await sender.sendMessages({ messageId: id, subject: 'OrderAccepted', body: 1 });
    await sender.sendMessages({ messageId: id, subject: 'OrderAccepted', body: 2 });
    await sender.close();
    expect(await drainIds('all')).toEqual([id]);
    expect(await drainIds('accepted')).toEqual([id]);
  });

  it('keeps a dead-letter queue and a delivery limit per subscription', async () => {
    const id = `dl-${randomUUID().slice(0, 6)}`;
    const sender = client.createSender(topic);
    await sender.sendMessages({ messageId: id, subject: 'OrderAccepted', body: {} });
    await sender.close();
    const accepted = receiverOf('accepted');
    // maxDeliveryCount 2: two abandons, and the message is in that subscription's dead-letter queue.
    await accepted.abandonMessage(await receiveOne(accepted));
    await accepted.abandonMessage(await receiveOne(accepted));
    const dlq = client.createReceiver(topic, 'accepted', { subQueueType: 'deadLetter' });
    const dead = await receiveOne(dlq);
    expect({ id: dead.messageId, reason: dead.deadLetterReason }).toEqual({ id, reason: 'MaxDeliveryCountExceeded' });
    await dlq.completeMessage(dead);
    await dlq.close();
    // The other subscription's copy is its own: still there, never delivered (the JS SDK counts failed deliveries).
    const copy = await receiveOne(receiverOf('all'));
    expect({ id: copy.messageId, deliveryCount: copy.deliveryCount }).toEqual({ id, deliveryCount: 0 });
    await receiverOf('all').completeMessage(copy);
  });

  it('holds a scheduled message in every matching subscription until due, and one cancel removes them all', async () => {
    const sender = client.createSender(topic);
    const soon = new Date(Date.now() + 2_000);
    const [kept] = await sender.scheduleMessages({ messageId: `sch-${randomUUID().slice(0, 6)}`, subject: 'OrderAccepted', body: {} }, soon);
    const [cancelled] = await sender.scheduleMessages({ messageId: `cxl-${randomUUID().slice(0, 6)}`, subject: 'OrderAccepted', body: {} }, soon);
    await sender.cancelScheduledMessages(cancelled!);
    await sender.close();
    expect(await receiverOf('accepted').receiveMessages(1, { maxWaitTimeInMs: 500 })).toEqual([]);
    const due = await receiveOne(receiverOf('accepted'));
    expect(due.messageId).toMatch(/^sch-/);
    expect(due.enqueuedTimeUtc!.getTime()).toBeGreaterThanOrEqual(soon.getTime() - 1_000);
    await receiverOf('accepted').completeMessage(due);
    expect((await drainIds('all')).filter((id) => id.startsWith('cxl-'))).toEqual([]);
    expect(kept).toBeDefined();
  });

  describe('the rule manager', () => {
    async function allRules(rules: ServiceBusRuleManager): Promise<RuleProperties[]> {
      const listed: RuleProperties[] = [];
      for await (const rule of rules.listRules()) listed.push(rule);
      return listed;
    }

    it('lists $Default, adds a SQL rule and a correlation rule with an action, lists them by name, removes them', async () => {
      const rules = client.createRuleManager(topic, 'managed');
      expect((await allRules(rules)).map((r) => [r.name, r.filter])).toEqual([['$Default', { sqlExpression: '1=1' }]]);
      await rules.createRule('z-sql', { sqlExpression: 'amount > 10' });
      await rules.createRule(
        'a-correlation',
        { subject: 'OrderAccepted', applicationProperties: { region: 'eu', rank: 2 } },
        { sqlExpression: "SET sys.CorrelationId = 'flagged'" },
      );
      const listed = await allRules(rules);
      expect(listed.map((r) => r.name)).toEqual(['$Default', 'a-correlation', 'z-sql']);
      expect(listed[1]).toMatchObject({
        filter: { subject: 'OrderAccepted', applicationProperties: { region: 'eu', rank: 2 } },
        action: { sqlExpression: "SET sys.CorrelationId = 'flagged'" },
      });
      expect(listed[2]).toMatchObject({ filter: { sqlExpression: 'amount > 10' }, action: {} });
      const firstPage = await rules.listRules().byPage({ maxPageSize: 2 }).next();
      expect((firstPage.value as { name: string }[]).map((r) => r.name)).toEqual(['$Default', 'a-correlation']);
      await rules.deleteRule('z-sql');
      await rules.deleteRule('a-correlation');
      expect((await allRules(rules)).map((r) => r.name)).toEqual(['$Default']);
    });

    it('refuses a second rule of the same name (409), an unknown one to delete, and a filter or action that does not parse', async () => {
      const rules = client.createRuleManager(topic, 'managed');
      await rules.createRule('twice', { subject: 'x' });
      await expect(rules.createRule('twice', { subject: 'y' })).rejects.toThrow(/The messaging entity '.*twice' already exists/);
      await expect(rules.deleteRule('never-made')).rejects.toMatchObject({ code: 'MessagingEntityNotFound' });
      await expect(rules.createRule('bad-filter', { sqlExpression: 'amount >' })).rejects.toThrow();
      await expect(rules.createRule('bad-action', { sqlExpression: '1=1' }, { sqlExpression: 'UPDATE amount' })).rejects.toThrow();
      await rules.deleteRule('twice');
      expect((await allRules(rules)).map((r) => r.name)).toEqual(['$Default']);
    });

    it('filters as the new rules say: user property names in any case, one copy for the rules without an action, one per rule with an action', async () => {
      const rules = client.createRuleManager(topic, 'managed');
      await drainIds('managed');
      await rules.deleteRule('$Default');
      const run = randomUUID().slice(0, 6);
      // The only rule without an action names the property in another case than the sender did.
      await rules.createRule('blue', { sqlExpression: `Color = 'blue' AND Run = '${run}'` });
      await rules.createRule(
        'flag-blue',
        { applicationProperties: { color: 'blue', run } },
        { sqlExpression: "SET priority = 'high'; REMOVE secret; SET sys.Label = 'flagged'" },
      );
      const sender = client.createSender(topic);
      await sender.sendMessages([
        { messageId: `blue-${run}`, subject: 'PaymentReceived', body: {}, applicationProperties: { color: 'blue', run, secret: 's', priority: 'low' } },
        { messageId: `red-${run}`, subject: 'PaymentReceived', body: {}, applicationProperties: { color: 'red', run } },
      ]);
      await sender.close();
      const got: ServiceBusReceivedMessage[] = [];
      for (
        let batch = await receiverOf('managed').receiveMessages(10, { maxWaitTimeInMs: 1000 });
        batch.length > 0;
        batch = await receiverOf('managed').receiveMessages(10, { maxWaitTimeInMs: 500 })
      ) {
        for (const m of batch) {
          got.push(m);
          await receiverOf('managed').completeMessage(m);
        }
      }
      const seen = got.map((m) => ({
        id: m.messageId,
        subject: m.subject,
        priority: m.applicationProperties?.priority,
        secret: m.applicationProperties?.secret,
        rule: m.applicationProperties?.RuleName,
      }));
      expect(seen.sort((a, b) => String(a.rule).localeCompare(String(b.rule)))).toEqual([
        { id: `blue-${run}`, subject: 'flagged', priority: 'high', secret: undefined, rule: 'flag-blue' },
        { id: `blue-${run}`, subject: 'PaymentReceived', priority: 'low', secret: 's', rule: undefined },
      ]);
      for (const name of ['blue', 'flag-blue']) await rules.deleteRule(name);
      await rules.createRule('$Default', { sqlExpression: '1=1' });
    });
  });

  it('refuses to receive from a topic and to send to a subscription', async () => {
    const strict = new ServiceBusClient(connectionString, { retryOptions: { maxRetries: 0 } });
    await expect(strict.createReceiver(topic).receiveMessages(1, { maxWaitTimeInMs: 1000 })).rejects.toThrow();
    await expect(strict.createSender(`${topic}/Subscriptions/all`).sendMessages({ body: 'x' })).rejects.toThrow();
    await strict.close();
  });
});
