import { randomUUID } from 'node:crypto';
import { ServiceBusAdministrationClient, ServiceBusClient, isServiceBusError } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRule, startServiceBusEmulator } from '../index.js';
import type { QueueSettings } from '../index.js';

/**
 * Sessions on a queue and on a topic subscription, the same behaviours against the emulator and
 * (given SERVICEBUS_CONNECTION_STRING with Manage rights) a real namespace.
 */
interface Names {
  readonly queue: string;
  readonly topic: string;
  readonly subscription: string;
}

interface Target {
  readonly name: string;
  /** The session lock duration the entities were made with. */
  readonly lockMs: number;
  setUp(): Promise<{ connectionString: string; names: Names; tearDown(): Promise<void> }>;
}

const lockMs = 5_000;
const sessionQueue = (): QueueSettings => ({
  lockDurationMs: lockMs,
  maxDeliveryCount: 5,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 0,
  deadLetteringOnMessageExpiration: false,
  requiresSession: true,
});

const emulatorTarget: Target = {
  name: 'the local emulator',
  lockMs,
  async setUp() {
    const emulator = await startServiceBusEmulator({
      port: 0,
      queues: { sessions: sessionQueue(), plain: { ...sessionQueue(), requiresSession: false } },
      topics: {
        events: {
          settings: { defaultMessageTimeToLiveMs: 3_600_000, duplicateDetectionWindowMs: 0 },
          subscriptions: { ordered: { settings: sessionQueue(), rules: [defaultRule] } },
        },
      },
    });
    return {
      connectionString: emulator.connectionString,
      names: { queue: 'sessions', topic: 'events', subscription: 'ordered' },
      tearDown: () => emulator.close(),
    };
  },
};

const realNamespaceTarget = (connectionString: string): Target => ({
  name: 'the namespace in SERVICEBUS_CONNECTION_STRING',
  lockMs,
  async setUp() {
    const admin = new ServiceBusAdministrationClient(connectionString);
    const suffix = randomUUID().slice(0, 8);
    const names = { queue: `contract-sessions-${suffix}`, topic: `contract-session-events-${suffix}`, subscription: 'ordered' };
    await admin.createQueue(names.queue, { requiresSession: true, lockDuration: 'PT5S', maxDeliveryCount: 5 });
    await admin.createTopic(names.topic);
    await admin.createSubscription(names.topic, names.subscription, { requiresSession: true, lockDuration: 'PT5S', maxDeliveryCount: 5 });
    return {
      connectionString,
      names,
      tearDown: async () => {
        await admin.deleteQueue(names.queue);
        await admin.deleteTopic(names.topic);
      },
    };
  },
});

const targets: Target[] = [emulatorTarget];
if (process.env.SERVICEBUS_CONNECTION_STRING) targets.push(realNamespaceTarget(process.env.SERVICEBUS_CONNECTION_STRING));
else console.log('Service Bus session contract suite against a real namespace: skipped because SERVICEBUS_CONNECTION_STRING is not set');

const codeOf = (error: unknown) => (isServiceBusError(error) ? error.code : (error as Error).name);

describe.each(targets)('Service Bus sessions: $name', (target) => {
  let client: ServiceBusClient;
  let names: Names;
  let tearDown: () => Promise<void>;

  beforeAll(async () => {
    const setUp = await target.setUp();
    names = setUp.names;
    tearDown = setUp.tearDown;
    client = new ServiceBusClient(setUp.connectionString);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await tearDown?.();
  });

  async function send(sessionId: string, bodies: readonly string[]) {
    const sender = client.createSender(names.queue);
    await sender.sendMessages(bodies.map((body) => ({ body, sessionId })));
    await sender.close();
  }

  it("delivers a named session's messages in order, and only that session's", async () => {
    const a = `a-${randomUUID().slice(0, 6)}`;
    await send(a, ['a1', 'a2', 'a3']);
    await send(`b-${randomUUID().slice(0, 6)}`, ['b1']);
    const receiver = await client.acceptSession(names.queue, a);
    expect(receiver.sessionId).toBe(a);
    expect(receiver.sessionLockedUntilUtc?.getTime()).toBeGreaterThan(Date.now());
    const got = await receiver.receiveMessages(10, { maxWaitTimeInMs: 1000 });
    expect(got.map((m) => m.body)).toEqual(['a1', 'a2', 'a3']);
    expect(got.every((m) => m.sessionId === a)).toBe(true);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
  });

  it('accepts the next session with messages when none is named', async () => {
    const c = `c-${randomUUID().slice(0, 6)}`;
    // Drain whatever sessions an earlier test left, then one session is left: c.
    await send(c, ['c1']);
    for (;;) {
      const next = await client.acceptNextSession(names.queue, { maxAutoLockRenewalDurationInMs: 0 });
      const got = await next.receiveMessages(10, { maxWaitTimeInMs: 500 });
      for (const m of got) await next.completeMessage(m);
      await next.close();
      if (next.sessionId === c) {
        expect(got.map((m) => m.body)).toEqual(['c1']);
        break;
      }
    }
  });

  it('refuses a session another receiver holds, and hands it over once that receiver closes', async () => {
    const d = `d-${randomUUID().slice(0, 6)}`;
    await send(d, ['d1']);
    const holder = await client.acceptSession(names.queue, d);
    expect((await holder.receiveMessages(1, { maxWaitTimeInMs: 1000 })).map((m) => m.body)).toEqual(['d1']);
    await expect(client.acceptSession(names.queue, d, { maxAutoLockRenewalDurationInMs: 0 })).rejects.toSatisfy((e) => codeOf(e) === 'SessionCannotBeLocked');
    await holder.close();
    const next = await client.acceptSession(names.queue, d);
    const [m] = await next.receiveMessages(1, { maxWaitTimeInMs: 1000 });
    expect(m?.body).toBe('d1');
    // The first holder received it and never settled it: closing gave it back, counted as a delivery.
    expect(m?.deliveryCount).toBe(1);
    await next.completeMessage(m!);
    await next.close();
  });

  it('keeps session state, and renews the session lock for the holder', async () => {
    const e = `e-${randomUUID().slice(0, 6)}`;
    await send(e, ['e1']);
    const receiver = await client.acceptSession(names.queue, e, { maxAutoLockRenewalDurationInMs: 0 });
    expect(await receiver.getSessionState()).toBeNull();
    await receiver.setSessionState('step-2');
    const before = receiver.sessionLockedUntilUtc!.getTime();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await receiver.renewSessionLock();
    expect(receiver.sessionLockedUntilUtc!.getTime()).toBeGreaterThan(before);
    await receiver.close();
    const again = await client.acceptSession(names.queue, e);
    expect(String(await again.getSessionState())).toBe('step-2');
    for (const m of await again.receiveMessages(1, { maxWaitTimeInMs: 1000 })) await again.completeMessage(m);
    await again.close();
  });

  it('lets a session lock lapse without renewal: the session can be accepted again and its message is delivered again', async () => {
    const f = `f-${randomUUID().slice(0, 6)}`;
    await send(f, ['f1']);
    const lapsed = await client.acceptSession(names.queue, f, { maxAutoLockRenewalDurationInMs: 0 });
    await lapsed.receiveMessages(1, { maxWaitTimeInMs: 1000 });
    await new Promise((resolve) => setTimeout(resolve, target.lockMs + 1500));
    const next = await client.acceptSession(names.queue, f);
    const [m] = await next.receiveMessages(1, { maxWaitTimeInMs: 2000 });
    expect(m?.body).toBe('f1');
    expect(m?.deliveryCount).toBe(1);
    await next.completeMessage(m!);
    await next.close();
    await lapsed.close().catch(() => undefined);
  }, 30_000);

  it('refuses a message without a SessionId, and a receiver that asks for no session', async () => {
    const sender = client.createSender(names.queue);
    await expect(sender.sendMessages({ body: 'no session' })).rejects.toThrow(/SessionId/);
    await sender.close();
    const receiver = client.createReceiver(names.queue);
    await expect(receiver.receiveMessages(1, { maxWaitTimeInMs: 1000 })).rejects.toThrow(/requires sessions|session/i);
    await receiver.close();
  });

  it("keeps one order's events in order on a session-enabled subscription", async () => {
    const orderId = `o-${randomUUID().slice(0, 6)}`;
    const sender = client.createSender(names.topic);
    await sender.sendMessages(['OrderAccepted', 'PaymentApplied', 'OrderShipped'].map((subject) => ({ body: { orderId }, subject, sessionId: orderId })));
    await sender.close();
    const receiver = await client.acceptSession(names.topic, names.subscription, orderId);
    const got = await receiver.receiveMessages(10, { maxWaitTimeInMs: 1000 });
    expect(got.map((m) => m.subject)).toEqual(['OrderAccepted', 'PaymentApplied', 'OrderShipped']);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
  });
});
