import { randomUUID } from 'node:crypto';
import { ServiceBusAdministrationClient, ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceBusEmulator } from '../index.js';
import type { QueueSettings, ServiceBusEmulator } from '../index.js';

/** The queues this suite needs, with the shortest lock and window each target allows. */
interface TestQueues {
  readonly main: string;
  readonly shortLock: string;
  readonly expiring: string;
  /** A default time-to-live longer than the AMQP header's ttl can hold (about 49.7 days). */
  readonly longLived: string;
  readonly lockDurationMs: number;
}

interface Target {
  readonly name: string;
  setUp(): Promise<{ connectionString: string; queues: TestQueues; tearDown(): Promise<void> }>;
}

const day = 24 * 3600 * 1000;

const queueSettings = (overrides: Partial<QueueSettings>): QueueSettings => ({
  lockDurationMs: 30_000,
  maxDeliveryCount: 3,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 60_000,
  deadLetteringOnMessageExpiration: false,
  ...overrides,
});

const emulatorTarget: Target = {
  name: 'the local emulator',
  async setUp() {
    const emulator: ServiceBusEmulator = await startServiceBusEmulator({
      port: 0,
      queues: {
        main: queueSettings({}),
        'short-lock': queueSettings({ lockDurationMs: 1_000, maxDeliveryCount: 10, duplicateDetectionWindowMs: 0 }),
        expiring: queueSettings({ deadLetteringOnMessageExpiration: true, duplicateDetectionWindowMs: 0 }),
        'long-lived': queueSettings({ defaultMessageTimeToLiveMs: 200 * day, duplicateDetectionWindowMs: 0 }),
      },
    });
    return {
      connectionString: emulator.connectionString,
      queues: { main: 'main', shortLock: 'short-lock', expiring: 'expiring', longLived: 'long-lived', lockDurationMs: 1_000 },
      tearDown: () => emulator.close(),
    };
  },
};

/** Azure's minimums: a 5 s lock, a 20 s duplicate-detection window. Needs a connection with Manage rights. */
const realNamespaceTarget = (connectionString: string): Target => ({
  name: 'the namespace in SERVICEBUS_CONNECTION_STRING',
  async setUp() {
    const admin = new ServiceBusAdministrationClient(connectionString);
    const suffix = randomUUID().slice(0, 8);
    const names = {
      main: `contract-main-${suffix}`,
      shortLock: `contract-lock-${suffix}`,
      expiring: `contract-ttl-${suffix}`,
      longLived: `contract-long-${suffix}`,
    };
    await admin.createQueue(names.main, { maxDeliveryCount: 3, requiresDuplicateDetection: true, duplicateDetectionHistoryTimeWindow: 'PT1M' });
    await admin.createQueue(names.shortLock, { lockDuration: 'PT5S', maxDeliveryCount: 10 });
    await admin.createQueue(names.expiring, { deadLetteringOnMessageExpiration: true });
    await admin.createQueue(names.longLived, { defaultMessageTimeToLive: 'P200D' });
    return {
      connectionString,
      queues: { ...names, lockDurationMs: 5_000 },
      tearDown: async () => {
        for (const name of Object.values(names)) await admin.deleteQueue(name);
      },
    };
  },
});

const targets: Target[] = [emulatorTarget];
if (process.env.SERVICEBUS_CONNECTION_STRING) {
  targets.push(realNamespaceTarget(process.env.SERVICEBUS_CONNECTION_STRING));
} else {
  console.log('Service Bus contract suite against a real namespace: skipped because SERVICEBUS_CONNECTION_STRING is not set');
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const first = Long.fromNumber(1);

describe.each(targets)('Service Bus contract: $name', (target) => {
  let client: ServiceBusClient;
  let connectionString: string;

  let queues: TestQueues;
  let tearDown: () => Promise<void>;
  let receiver: ServiceBusReceiver;

  beforeAll(async () => {
    const setUp = await target.setUp();
    ({ queues, tearDown, connectionString } = setUp);
    client = new ServiceBusClient(setUp.connectionString);
    receiver = client.createReceiver(queues.main);
  });
  afterAll(async () => {
    await client.close();
    await tearDown();
  });

  async function receiveOne(r: ServiceBusReceiver = receiver, maxWaitTimeInMs = 3000): Promise<ServiceBusReceivedMessage> {
    const [m] = await r.receiveMessages(1, { maxWaitTimeInMs });
    if (!m) throw new Error('no message arrived');
    return m;
  }

  async function drain(r: ServiceBusReceiver): Promise<void> {
    for (let got = await r.receiveMessages(50, { maxWaitTimeInMs: 300 }); got.length > 0; got = await r.receiveMessages(50, { maxWaitTimeInMs: 300 })) {
      for (const m of got) await r.completeMessage(m);
    }
  }

  it('refuses a link to an entity that does not exist at once, as MessagingEntityNotFound', async () => {
    const noRetry = new ServiceBusClient(connectionString, { retryOptions: { maxRetries: 0 } });
    const startedAt = Date.now();
    await expect(noRetry.createReceiver(`no-such-queue-${randomUUID().slice(0, 8)}`).peekMessages(1)).rejects.toMatchObject({
      code: 'MessagingEntityNotFound',
    });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    await noRetry.close();
  });

  it('refuses a token signed with the wrong key, as UnauthorizedAccess', async () => {
    const wrongKey = connectionString.replace(/SharedAccessKey=[^;]+/, 'SharedAccessKey=bm90LXRoZS1rZXk=');
    const refused = new ServiceBusClient(wrongKey, { retryOptions: { maxRetries: 0 } });
    await expect(refused.createReceiver(queues.main).peekMessages(1)).rejects.toMatchObject({ code: 'UnauthorizedAccess' });
    await refused.close();
  });

  it("refuses a message over the Standard tier's 256 KB at send, as MessageSizeExceeded, and takes one under it", async () => {
    const sender = client.createSender(queues.shortLock);
    await expect(sender.sendMessages({ messageId: 'too-big', body: 'x'.repeat(300 * 1024) })).rejects.toMatchObject({ code: 'MessageSizeExceeded' });
    await expect(sender.sendMessages([{ body: 'y'.repeat(150 * 1024) }, { body: 'z'.repeat(150 * 1024) }])).rejects.toMatchObject({
      code: 'MessageSizeExceeded',
    });
    await sender.sendMessages({ messageId: 'fits', body: 'x'.repeat(200 * 1024) });
    const r = client.createReceiver(queues.shortLock);
    const m = await receiveOne(r);
    expect(m.messageId).toBe('fits');
    await r.completeMessage(m);
    await r.close();
  });

  it('refuses a scheduled message over 256 KB as MessageSizeExceeded, and schedules none of its batch', async () => {
    const sender = client.createSender(queues.shortLock);
    const at = new Date(Date.now() + 60_000);
    await expect(
      sender.scheduleMessages(
        [
          { messageId: 'small', body: 'x' },
          { messageId: 'too-big', body: 'x'.repeat(300 * 1024) },
        ],
        at,
      ),
    ).rejects.toMatchObject({ code: 'MessageSizeExceeded' });
    const r = client.createReceiver(queues.shortLock);
    expect((await r.peekMessages(10, { fromSequenceNumber: first })).map((m) => m.messageId)).not.toContain('small');
    await r.close();
  });

  it('carries a time-to-live longer than the AMQP header holds (100 days), and a default one as long, to the receiver', async () => {
    const sender = client.createSender(queues.longLived);
    const r = client.createReceiver(queues.longLived);
    // ServiceBusMessage.timeToLive is capped at the header's uint by the SDK; an AMQP message can say more.
    await sender.sendMessages({ body: 'x', bodyType: 'data', header: { timeToLive: 100 * day }, properties: { messageId: 'hundred-days' } });
    const long = await receiveOne(r);
    expect(long.messageId).toBe('hundred-days');
    expect(long._rawAmqpMessage.header?.timeToLive).toBe(100 * day);
    const { creationTime, absoluteExpiryTime } = long._rawAmqpMessage.properties ?? {};
    expect(absoluteExpiryTime! - creationTime!).toBe(100 * day);
    await r.completeMessage(long);
    await sender.sendMessages({ messageId: 'queue-default', body: 'y' });
    const byDefault = await receiveOne(r);
    expect(byDefault.messageId).toBe('queue-default');
    expect(byDefault.expiresAtUtc!.getTime() - byDefault.enqueuedTimeUtc!.getTime()).toBeGreaterThan(100 * day);
    await r.completeMessage(byDefault);
    await r.close();
  });

  it('gives a message sent without a MessageId one of its own, which peek shows and settlement accepts', async () => {
    const r = client.createReceiver(queues.shortLock);
    await drain(r);
    await client.createSender(queues.shortLock).sendMessages({ body: 'no id' });
    const [peeked] = await r.peekMessages(1);
    const m = await receiveOne(r);
    expect(typeof m.messageId).toBe('string');
    expect(String(m.messageId).length).toBeGreaterThan(0);
    expect(peeked?.messageId).toBe(m.messageId);
    await r.completeMessage(m);
    expect(await r.peekMessages(1)).toEqual([]);
    await r.close();
  });

  it('delivers a message peek-locked, with its properties, sequence number, times and a delivery count of 0', async () => {
    const sender = client.createSender(queues.main);
    await sender.sendMessages({
      messageId: 'props-1',
      body: { orderId: 'o-1' },
      contentType: 'application/json',
      subject: 'OrderPlaced',
      correlationId: 'corr-1',
      applicationProperties: { 'idempotency-key': 'k-1', attempt: 2 },
    });
    const m = await receiveOne();
    expect(m).toMatchObject({
      messageId: 'props-1',
      body: { orderId: 'o-1' },
      contentType: 'application/json',
      subject: 'OrderPlaced',
      correlationId: 'corr-1',
      applicationProperties: { 'idempotency-key': 'k-1', attempt: 2 },
      deliveryCount: 0,
    });
    expect(m.sequenceNumber?.toNumber()).toBeGreaterThan(0);
    expect(m.lockToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.lockedUntilUtc!.getTime()).toBeGreaterThan(Date.now());
    expect(m.expiresAtUtc!.getTime()).toBeGreaterThan(m.enqueuedTimeUtc!.getTime());
    const renewedUntil = await receiver.renewMessageLock(m);
    expect(renewedUntil.getTime()).toBeGreaterThanOrEqual(m.lockedUntilUtc!.getTime());
    await receiver.completeMessage(m);
    expect(await receiver.peekMessages(10, { fromSequenceNumber: first })).toEqual([]);
    await sender.close();
  });

  it('redelivers an abandoned message with its delivery count raised and the modified properties', async () => {
    await client.createSender(queues.main).sendMessages({ messageId: 'abandon-1', body: 'x' });
    await receiver.abandonMessage(await receiveOne(), { note: 'tried once' });
    const again = await receiveOne();
    expect(again).toMatchObject({ messageId: 'abandon-1', deliveryCount: 1, applicationProperties: { note: 'tried once' } });
    await receiver.completeMessage(again);
  });

  it('dead-letters with a reason and description, readable, peekable and removable from $DeadLetterQueue', async () => {
    const dlq = client.createReceiver(queues.main, { subQueueType: 'deadLetter' });
    await client.createSender(queues.main).sendMessages({ messageId: 'dl-1', body: 'x', applicationProperties: { keep: 'me' } });
    await receiver.deadLetterMessage(await receiveOne(), { deadLetterReason: 'InvalidOrder', deadLetterErrorDescription: 'quantity must be positive' });
    const peeked = await dlq.peekMessages(10, { fromSequenceNumber: first });
    expect(peeked.map((p) => p.messageId)).toEqual(['dl-1']);
    const dead = await receiveOne(dlq);
    expect(dead).toMatchObject({
      messageId: 'dl-1',
      deadLetterReason: 'InvalidOrder',
      deadLetterErrorDescription: 'quantity must be positive',
      applicationProperties: { keep: 'me' },
    });
    expect(dead.deadLetterSource).toBeUndefined();
    // Abandoning in the dead-letter queue hands the message back without counting a delivery.
    const countBefore = dead.deliveryCount;
    await dlq.abandonMessage(dead);
    const again = await receiveOne(dlq);
    expect(again.deliveryCount).toBe(countBefore);
    await dlq.completeMessage(again);
    expect(await dlq.peekMessages(10, { fromSequenceNumber: first })).toEqual([]);
    await dlq.close();
  });

  it('refuses to dead-letter a message in $DeadLetterQueue (the SDK reports GeneralError), by link and through $management, losing nothing', async () => {
    const dlq = client.createReceiver(queues.main, { subQueueType: 'deadLetter' });
    await client.createSender(queues.main).sendMessages({ messageId: 'dl-twice', body: 'x' });
    await receiver.deadLetterMessage(await receiveOne(), { deadLetterReason: 'First', deadLetterErrorDescription: 'the first time' });
    const dead = await receiveOne(dlq);
    await expect(dlq.deadLetterMessage(dead, { deadLetterReason: 'Second', deadLetterErrorDescription: 'not allowed' })).rejects.toMatchObject({
      code: 'GeneralError',
    });
    const again = await receiveOne(dlq);
    expect(again).toMatchObject({ messageId: 'dl-twice', deadLetterReason: 'First', deliveryCount: dead.deliveryCount });
    // A message received by sequence number is settled through $management: refused there too.
    await dlq.deferMessage(again);
    const [deferred] = await dlq.receiveDeferredMessages(again.sequenceNumber!);
    await expect(dlq.deadLetterMessage(deferred!, { deadLetterReason: 'Second', deadLetterErrorDescription: 'not allowed' })).rejects.toMatchObject({
      code: 'GeneralError',
    });
    const [still] = await dlq.receiveDeferredMessages(again.sequenceNumber!);
    expect(still).toMatchObject({ messageId: 'dl-twice', deadLetterReason: 'First' });
    await dlq.completeMessage(still!);
    expect(await dlq.peekMessages(10, { fromSequenceNumber: first })).toEqual([]);
    await dlq.close();
  });

  it('sends batches, as an array and as a message batch', async () => {
    const sender = client.createSender(queues.main);
    await sender.sendMessages([
      { messageId: 'b-1', body: 'one' },
      { messageId: 'b-2', body: 'two' },
    ]);
    const batch = await sender.createMessageBatch();
    expect(batch.tryAddMessage({ messageId: 'b-3', body: Buffer.from('three') })).toBe(true);
    await sender.sendMessages(batch);
    const got = await receiver.receiveMessages(10, { maxWaitTimeInMs: 2000 });
    for (let i = 0; got.length < 3 && i < 5; i += 1) got.push(...(await receiver.receiveMessages(10, { maxWaitTimeInMs: 500 })));
    for (const m of got) await receiver.completeMessage(m);
    expect(got.map((m) => m.messageId).sort()).toEqual(['b-1', 'b-2', 'b-3']);
    expect(Buffer.from(got.find((m) => m.messageId === 'b-3')!.body as Buffer).toString()).toBe('three');
  });

  it('accepts a copy of a MessageId inside the duplicate-detection window and silently drops it', async () => {
    const sender = client.createSender(queues.main);
    await sender.sendMessages({ messageId: 'dup-1', body: 'first' });
    await sender.sendMessages({ messageId: 'dup-1', body: 'copy' }); // reported as sent
    await sender.sendMessages({ messageId: 'dup-2', body: 'other' });
    const got = await receiver.receiveMessages(10, { maxWaitTimeInMs: 1500 });
    for (const m of got) await receiver.completeMessage(m);
    expect(got.map((m) => `${m.messageId}:${String(m.body)}`).sort()).toEqual(['dup-1:first', 'dup-2:other']);
  });

  it('dead-letters a message at maxDeliveryCount with MaxDeliveryCountExceeded', async () => {
    await client.createSender(queues.main).sendMessages({ messageId: 'poison-1', body: 'p' });
    for (let delivery = 0; delivery < 3; delivery += 1) {
      const m = await receiveOne();
      expect(m.deliveryCount).toBe(delivery);
      await receiver.abandonMessage(m);
    }
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 })).toEqual([]);
    const dlq = client.createReceiver(queues.main, { subQueueType: 'deadLetter' });
    const dead = await receiveOne(dlq);
    expect(dead).toMatchObject({ messageId: 'poison-1', deadLetterReason: 'MaxDeliveryCountExceeded', deliveryCount: 3 });
    await dlq.completeMessage(dead);
    await dlq.close();
  });

  it('redelivers after lock expiry and refuses the late settlement with MessageLockLost', async () => {
    const r = client.createReceiver(queues.shortLock, { maxAutoLockRenewalDurationInMs: 0 });
    await client.createSender(queues.shortLock).sendMessages({ messageId: 'slow-1', body: 's' });
    const slow = await receiveOne(r);
    await wait(queues.lockDurationMs + 500);
    await expect(r.completeMessage(slow)).rejects.toMatchObject({ code: 'MessageLockLost' });
    const again = await receiveOne(r);
    expect(again).toMatchObject({ messageId: 'slow-1', deliveryCount: 1 });
    await r.completeMessage(again);
    await r.close();
  }, 30_000);

  it('defers a message and hands it out again by sequence number, settled through $management', async () => {
    await client.createSender(queues.main).sendMessages({ messageId: 'later-1', body: 'd' });
    const m = await receiveOne();
    await receiver.deferMessage(m);
    const [deferred] = await receiver.receiveDeferredMessages(m.sequenceNumber!);
    expect(deferred).toMatchObject({ messageId: 'later-1', state: 'deferred', deliveryCount: 1 });
    await receiver.completeMessage(deferred!);
    expect(await receiver.peekMessages(10, { fromSequenceNumber: first })).toEqual([]);
  });

  it('dead-letters an expired message with TTLExpiredException when the queue says so', async () => {
    const dlq = client.createReceiver(queues.expiring, { subQueueType: 'deadLetter' });
    await client.createSender(queues.expiring).sendMessages({ messageId: 'old-1', body: 't', timeToLive: 300 });
    await wait(800);
    expect(await client.createReceiver(queues.expiring).peekMessages(5, { fromSequenceNumber: first })).toEqual([]);
    const dead = await receiveOne(dlq, 5000);
    expect(dead).toMatchObject({ messageId: 'old-1', deadLetterReason: 'TTLExpiredException' });
    await dlq.completeMessage(dead);
    await dlq.close();
  });

  // The operator tool's edit looks in the queue for a copy under the original's key: a copy that a
  // consumer holds locked must be seen, as Azure's peek shows locked messages (message browsing).
  it('peeks a message another receiver holds locked, until it is completed', async () => {
    const sender = client.createSender(queues.main);
    await sender.sendMessages({ messageId: 'locked-1', body: 'l' });
    const m = await receiveOne();
    const browser = client.createReceiver(queues.main);
    expect((await browser.peekMessages(10, { fromSequenceNumber: first })).map((p) => p.messageId)).toEqual(['locked-1']);
    await receiver.completeMessage(m);
    expect(await browser.peekMessages(10, { fromSequenceNumber: first })).toEqual([]);
    await browser.close();
    await sender.close();
  });

  it('holds a scheduled message until its time, and drops a cancelled one', async () => {
    const sender = client.createSender(queues.main);
    const at = new Date(Date.now() + 1500);
    const [kept] = await sender.scheduleMessages({ messageId: 'sched-1', body: 'k' }, at);
    const [cancelled] = await sender.scheduleMessages({ messageId: 'sched-2', body: 'c' }, at);
    await sender.cancelScheduledMessages(cancelled!);
    const peeked = await receiver.peekMessages(10, { fromSequenceNumber: first });
    expect(peeked.map((p) => [p.messageId, p.state])).toEqual([['sched-1', 'scheduled']]);
    expect(peeked[0]?.sequenceNumber?.toNumber()).toBe(kept!.toNumber());
    // Enqueued at its scheduled time, not when the schedule was sent.
    expect(Math.abs((peeked[0]?.enqueuedTimeUtc?.getTime() ?? 0) - at.getTime())).toBeLessThan(1_000);
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 })).toEqual([]);
    const m = await receiveOne(receiver, 5000);
    expect(m.messageId).toBe('sched-1');
    // Once due it is received, and still says it was scheduled, as Service Bus reports it.
    expect(m.state).toBe('scheduled');
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime() - 50);
    await receiver.completeMessage(m);
    expect(await receiver.receiveMessages(1, { maxWaitTimeInMs: 300 })).toEqual([]);
  });

  it('gives competing receivers disjoint messages, and all of them', async () => {
    const sender = client.createSender(queues.main);
    const ids = Array.from({ length: 200 }, (_, i) => `compete-${i}`);
    const receivers = Array.from({ length: 4 }, () => client.createReceiver(queues.main));
    // Attach every receiver first, so that all four compete from the first message on.
    await Promise.all(receivers.map((r) => r.receiveMessages(1, { maxWaitTimeInMs: 100 })));
    await sender.sendMessages(ids.map((messageId) => ({ messageId, body: messageId })));
    const seenBy = await Promise.all(
      receivers.map(async (r) => {
        const seen: string[] = [];
        for (let got = await r.receiveMessages(20, { maxWaitTimeInMs: 500 }); got.length > 0; got = await r.receiveMessages(20, { maxWaitTimeInMs: 500 })) {
          for (const m of got) {
            seen.push(String(m.messageId));
            await r.completeMessage(m);
          }
        }
        return seen;
      }),
    );
    const all = seenBy.flat();
    expect(all.sort()).toEqual([...ids].sort());
    expect(new Set(all).size).toBe(all.length);
    expect(seenBy.filter((s) => s.length > 0).length).toBeGreaterThan(1);
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('deletes on receive in receive-and-delete mode', async () => {
    await client.createSender(queues.main).sendMessages({ messageId: 'rad-1', body: 'r' });
    const r = client.createReceiver(queues.main, { receiveMode: 'receiveAndDelete' });
    expect((await receiveOne(r)).messageId).toBe('rad-1');
    expect(await receiver.peekMessages(5, { fromSequenceNumber: first })).toEqual([]);
    await r.close();
  });

  it('auto-completes messages for a subscribe() receiver, as the Functions host does', async () => {
    await client.createSender(queues.main).sendMessages([
      { messageId: 'sub-1', body: 1 },
      { messageId: 'sub-2', body: 2 },
    ]);
    const seen: string[] = [];
    const sub = receiver.subscribe(
      {
        processMessage: async (m) => {
          seen.push(String(m.messageId));
        },
        processError: async () => {},
      },
      { autoCompleteMessages: true },
    );
    for (let i = 0; i < 50 && seen.length < 2; i += 1) await wait(50);
    await sub.close();
    await wait(100);
    expect(seen.sort()).toEqual(['sub-1', 'sub-2']);
    expect(await receiver.peekMessages(5, { fromSequenceNumber: first })).toEqual([]);
  });

  it('keeps delivering past 2,048 peek-lock messages on one receiver', async () => {
    const sender = client.createSender(queues.main);
    for (let start = 0; start < 2100; start += 300) {
      await sender.sendMessages(Array.from({ length: Math.min(300, 2100 - start) }, (_, i) => ({ messageId: `many-${start + i}`, body: start + i })));
    }
    let received = 0;
    for (
      let got = await receiver.receiveMessages(100, { maxWaitTimeInMs: 1000 });
      got.length > 0;
      got = await receiver.receiveMessages(100, { maxWaitTimeInMs: 1000 })
    ) {
      await Promise.all(got.map((m) => receiver.completeMessage(m)));
      received += got.length;
    }
    expect(received).toBe(2100);
  }, 60_000);

  it('refuses a queue that does not exist', async () => {
    await expect(client.createSender(`missing-${randomUUID()}`).sendMessages({ body: 'x' })).rejects.toMatchObject({ code: 'MessagingEntityNotFound' });
  });

  afterAll(async () => drain(receiver));
});
