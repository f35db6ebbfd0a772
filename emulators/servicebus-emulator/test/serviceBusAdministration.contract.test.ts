import { randomUUID } from 'node:crypto';
import { ServiceBusAdministrationClient } from '@azure/service-bus';
import type { RuleProperties } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlFilter, startServiceBusEmulator } from '../index.js';
import type { QueueSettings } from '../index.js';

/**
 * The read side of the administration REST API (what `npm run doctor` uses), the same reads
 * against the emulator and (given SERVICEBUS_CONNECTION_STRING with Manage rights) a real
 * namespace, where the entities are created first through the same client. One queue, one topic
 * with a SQL-filtered subscription, a correlation-filtered one and a session-enabled one.
 */
interface Names {
  readonly queue: string;
  readonly topic: string;
}

interface Target {
  readonly name: string;
  setUp(): Promise<{ admin: ServiceBusAdministrationClient; names: Names; tearDown(): Promise<void> }>;
}

const accepted = "sys.Label = 'OrderAccepted' AND sys.To IS NULL";
const subscription = (overrides: Partial<QueueSettings> = {}): QueueSettings => ({
  lockDurationMs: 45_000,
  maxDeliveryCount: 4,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 0,
  deadLetteringOnMessageExpiration: true,
  ...overrides,
});

const emulatorTarget: Target = {
  name: 'the local emulator',
  async setUp() {
    const emulator = await startServiceBusEmulator({
      port: 0,
      healthPort: 0,
      queues: {
        work: {
          lockDurationMs: 30_000,
          maxDeliveryCount: 3,
          defaultMessageTimeToLiveMs: 7_200_000,
          duplicateDetectionWindowMs: 120_000,
          deadLetteringOnMessageExpiration: true,
        },
      },
      topics: {
        events: {
          settings: { defaultMessageTimeToLiveMs: 3_600_000, duplicateDetectionWindowMs: 60_000 },
          subscriptions: {
            sql: { settings: subscription(), rules: [{ name: 'accepted', filter: sqlFilter(accepted) }] },
            addressed: { settings: subscription(), rules: [{ name: 'retries', filter: { kind: 'correlation', fields: { to: 'addressed' } } }] },
            ordered: { settings: subscription({ requiresSession: true }), rules: [{ name: 'unaddressed', filter: sqlFilter('sys.To IS NULL') }] },
          },
        },
      },
    });
    // 7.9.5 always speaks HTTPS to the Endpoint's host and port: trust the emulator's certificate for this client only.
    const admin = new ServiceBusAdministrationClient(emulator.administrationConnectionString ?? '', {
      tlsOptions: { ca: emulator.administrationCaCertificate },
    });
    return { admin, names: { queue: 'work', topic: 'events' }, tearDown: () => emulator.close() };
  },
};

const realNamespaceTarget = (connectionString: string): Target => ({
  name: 'the namespace in SERVICEBUS_CONNECTION_STRING',
  async setUp() {
    const admin = new ServiceBusAdministrationClient(connectionString);
    const suffix = randomUUID().slice(0, 8);
    const names = { queue: `contract-admin-${suffix}`, topic: `contract-admin-events-${suffix}` };
    await admin.createQueue(names.queue, {
      lockDuration: 'PT30S',
      maxDeliveryCount: 3,
      defaultMessageTimeToLive: 'PT2H',
      requiresDuplicateDetection: true,
      duplicateDetectionHistoryTimeWindow: 'PT2M',
      deadLetteringOnMessageExpiration: true,
    });
    await admin.createTopic(names.topic, { defaultMessageTimeToLive: 'PT1H', requiresDuplicateDetection: true, duplicateDetectionHistoryTimeWindow: 'PT1M' });
    const options = { lockDuration: 'PT45S', maxDeliveryCount: 4, defaultMessageTimeToLive: 'PT1H', deadLetteringOnMessageExpiration: true };
    await admin.createSubscription(names.topic, 'sql', { ...options, defaultRuleOptions: { name: 'accepted', filter: { sqlExpression: accepted } } });
    await admin.createSubscription(names.topic, 'addressed', { ...options, defaultRuleOptions: { name: 'retries', filter: { to: 'addressed' } } });
    await admin.createSubscription(names.topic, 'ordered', {
      ...options,
      requiresSession: true,
      defaultRuleOptions: { name: 'unaddressed', filter: { sqlExpression: 'sys.To IS NULL' } },
    });
    return {
      admin,
      names,
      tearDown: async () => {
        await admin.deleteTopic(names.topic);
        await admin.deleteQueue(names.queue);
      },
    };
  },
});

const targets: Target[] = [emulatorTarget];
if (process.env.SERVICEBUS_CONNECTION_STRING) targets.push(realNamespaceTarget(process.env.SERVICEBUS_CONNECTION_STRING));
else console.log('Service Bus administration contract suite against a real namespace: skipped because SERVICEBUS_CONNECTION_STRING is not set');

describe.each(targets)('Service Bus administration reads: $name', (target) => {
  let admin: ServiceBusAdministrationClient;
  let names: Names;
  let tearDown: () => Promise<void>;

  beforeAll(async () => {
    ({ admin, names, tearDown } = await target.setUp());
  });

  afterAll(async () => {
    await tearDown();
  });

  it('reads a queue with its lock, delivery limit, time-to-live, duplicate detection and dead-lettering', async () => {
    const queue = await admin.getQueue(names.queue);
    expect(queue).toMatchObject({
      name: names.queue,
      lockDuration: 'PT30S',
      maxDeliveryCount: 3,
      defaultMessageTimeToLive: 'PT2H',
      requiresDuplicateDetection: true,
      duplicateDetectionHistoryTimeWindow: 'PT2M',
      deadLetteringOnMessageExpiration: true,
      requiresSession: false,
      status: 'Active',
    });
  });

  it('reads a topic with its duplicate detection and time-to-live', async () => {
    const topic = await admin.getTopic(names.topic);
    expect(topic).toMatchObject({
      name: names.topic,
      requiresDuplicateDetection: true,
      duplicateDetectionHistoryTimeWindow: 'PT1M',
      defaultMessageTimeToLive: 'PT1H',
    });
  });

  it('reads a subscription, session-enabled or not', async () => {
    expect(await admin.getSubscription(names.topic, 'sql')).toMatchObject({
      topicName: names.topic,
      subscriptionName: 'sql',
      lockDuration: 'PT45S',
      maxDeliveryCount: 4,
      defaultMessageTimeToLive: 'PT1H',
      deadLetteringOnMessageExpiration: true,
      requiresSession: false,
    });
    expect(await admin.getSubscription(names.topic, 'ordered')).toMatchObject({ subscriptionName: 'ordered', requiresSession: true });
  });

  it("lists a subscription's rules: a SQL filter with its expression, a correlation filter with its fields", async () => {
    expect(await rulesOf(admin, names.topic, 'sql')).toEqual([{ name: 'accepted', sqlExpression: accepted }]);
    const [retries] = await rulesOf(admin, names.topic, 'addressed');
    expect(retries).toMatchObject({ name: 'retries', to: 'addressed' });
    expect(await admin.getRule(names.topic, 'ordered', 'unaddressed')).toMatchObject({ name: 'unaddressed', filter: { sqlExpression: 'sys.To IS NULL' } });
  });

  it('reports an entity that does not exist as MessageEntityNotFoundError', async () => {
    await expect(admin.getQueue(`${names.queue}-missing`)).rejects.toMatchObject({ code: 'MessageEntityNotFoundError' });
    await expect(admin.getSubscription(names.topic, 'missing')).rejects.toMatchObject({ code: 'MessageEntityNotFoundError' });
    await expect(admin.getRule(names.topic, 'sql', 'missing')).rejects.toMatchObject({ code: 'MessageEntityNotFoundError' });
    expect(await admin.queueExists(names.queue)).toBe(true);
    expect(await admin.topicExists(`${names.topic}-missing`)).toBe(false);
  });
});

describe('the emulator administration endpoint', () => {
  it('refuses a request signed with a key it does not know, as Service Bus does (401)', async () => {
    const emulator = await startServiceBusEmulator({ port: 0, healthPort: 0 });
    try {
      const connectionString = (emulator.administrationConnectionString ?? '').replace('SharedAccessKey=local', 'SharedAccessKey=wrong');
      const admin = new ServiceBusAdministrationClient(connectionString, { tlsOptions: { ca: emulator.administrationCaCertificate } });
      await expect(admin.getQueue('orders')).rejects.toMatchObject({ code: 'UnauthorizedRequestError', statusCode: 401 });
    } finally {
      await emulator.close();
    }
  });

  it('is read-only: a create is refused (405) naming where entities come from, and lists what it has', async () => {
    const emulator = await startServiceBusEmulator({ port: 0, healthPort: 0 });
    try {
      const admin = new ServiceBusAdministrationClient(emulator.administrationConnectionString ?? '', {
        tlsOptions: { ca: emulator.administrationCaCertificate },
      });
      await expect(admin.createQueue('another')).rejects.toMatchObject({ statusCode: 405, message: expect.stringContaining('infra/servicebus-queues.json') });
      const queues: string[] = [];
      for await (const queue of admin.listQueues()) queues.push(queue.name);
      const topics: string[] = [];
      for await (const topic of admin.listTopics()) topics.push(topic.name);
      expect({ queues, topics }).toEqual({ queues: ['orders'], topics: ['order-events'] });
    } finally {
      await emulator.close();
    }
  });

  it("answers plain HTTP on the same port, as Microsoft's emulator does for clients that know UseDevelopmentEmulator", async () => {
    const emulator = await startServiceBusEmulator({ port: 0, healthPort: 0 });
    try {
      const response = await fetch(`http://127.0.0.1:${emulator.healthPort ?? 0}/orders?api-version=2021-05`, {
        headers: { authorization: 'Bearer a-token-it-cannot-check' },
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('<LockDuration>PT1M</LockDuration>');
    } finally {
      await emulator.close();
    }
  });
});

async function rulesOf(admin: ServiceBusAdministrationClient, topic: string, subscriptionName: string): Promise<Record<string, unknown>[]> {
  const rules: RuleProperties[] = [];
  for await (const rule of admin.listRules(topic, subscriptionName)) rules.push(rule);
  return rules.map((r) => ({ name: r.name, ...Object.fromEntries(Object.entries(r.filter).filter(([, v]) => v !== undefined)) }));
}
