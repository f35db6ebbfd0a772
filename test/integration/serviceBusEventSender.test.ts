import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { QueueSettings, ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { ServiceBusEventSender, TransientSendError, isRefusal, toServiceBusMessage } from '../../src/outbox/index.js';
import type { OutboxMessage } from '../../src/outbox/index.js';

// The outbox's sender against the emulator through the SDK: what arrives, how batches split, and
// which failures are refusals (set the event aside) and which are passing faults (try again later).
const settings: QueueSettings = {
  lockDurationMs: 30_000,
  maxDeliveryCount: 3,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 60_000,
  deadLetteringOnMessageExpiration: false,
};

const event = (n: number, overrides: Partial<OutboxMessage> = {}): OutboxMessage => ({
  messageId: `e-${n}`,
  subject: 'OrderAccepted',
  contentType: 'application/json',
  body: { orderId: `o-${n}` },
  applicationProperties: { 'cloudEvents:id': `e-${n}`, n, flag: true },
  ...overrides,
});

describe('ServiceBusEventSender, against the emulator through the SDK', () => {
  let emulator: ServiceBusEmulator;
  let client: ServiceBusClient;

  beforeAll(async () => {
    emulator = await startServiceBusEmulator({ port: 0, queues: { events: settings, big: settings } });
    client = new ServiceBusClient(emulator.connectionString);
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  async function receiveAll(queue: string, count: number): Promise<ServiceBusReceivedMessage[]> {
    const receiver = client.createReceiver(queue, { receiveMode: 'receiveAndDelete' });
    const got: ServiceBusReceivedMessage[] = [];
    for (let round = 0; round < 20 && got.length < count; round += 1)
      got.push(...(await receiver.receiveMessages(count - got.length, { maxWaitTimeInMs: 500 })));
    await receiver.close();
    return got;
  }

  it('sends each message as written: id, subject, content type, JSON body, session, correlation and properties', async () => {
    const sender = new ServiceBusEventSender({ connectionString: emulator.connectionString });
    const outcomes = await sender.send('events', [event(1, { sessionId: 'o-1', correlationId: 'm-1' }), event(2)]);
    expect(outcomes).toEqual([{ kind: 'sent' }, { kind: 'sent' }]);
    const got = await receiveAll('events', 2);
    expect(got.map((m) => m.messageId).sort()).toEqual(['e-1', 'e-2']);
    const first = got.find((m) => m.messageId === 'e-1');
    expect(first).toMatchObject({
      subject: 'OrderAccepted',
      contentType: 'application/json',
      body: { orderId: 'o-1' },
      sessionId: 'o-1',
      correlationId: 'm-1',
      applicationProperties: { 'cloudEvents:id': 'e-1', n: 1, flag: true },
    });
    const second = got.find((m) => m.messageId === 'e-2');
    expect(second?.sessionId).toBeUndefined();
    expect(second?.correlationId).toBeUndefined();
    await sender.close();
  });

  /** Counts the SDK's own calls (not a fake: the messages still go to the emulator): round trips and links. */
  function countingSdkCalls() {
    const probe = client.createSender('events');
    const senderPrototype = Object.getPrototypeOf(probe) as { sendMessages: (...args: unknown[]) => Promise<void> };
    void probe.close();
    return {
      sends: vi.spyOn(senderPrototype, 'sendMessages'),
      links: vi.spyOn(ServiceBusClient.prototype, 'createSender'),
      closes: vi.spyOn(ServiceBusClient.prototype, 'close'),
    };
  }
  afterEach(() => vi.restoreAllMocks());

  it('sends what fits one batch in one round trip, over one link per destination that later sends reuse, and closes its connection', async () => {
    const calls = countingSdkCalls();
    const sender = new ServiceBusEventSender({ connectionString: emulator.connectionString });
    expect(await sender.send('events', [event(40), event(41), event(42)])).toEqual([{ kind: 'sent' }, { kind: 'sent' }, { kind: 'sent' }]);
    expect(await sender.send('events', [event(43)])).toEqual([{ kind: 'sent' }]);
    expect([calls.sends.mock.calls.length, calls.links.mock.calls.length]).toEqual([2, 1]);
    expect((await receiveAll('events', 4)).map((m) => m.messageId).sort()).toEqual(['e-40', 'e-41', 'e-42', 'e-43']);
    await sender.close();
    expect(calls.closes).toHaveBeenCalledTimes(1);
  });

  it('splits what does not fit one batch into several, and refuses by name only a message too large for any, sending the rest', async () => {
    const calls = countingSdkCalls();
    const sender = new ServiceBusEventSender({ connectionString: emulator.connectionString });
    const large = (n: number) => event(n, { body: { pad: 'x'.repeat(100_000) } });
    const outcomes = await sender.send('big', [large(10), large(11), large(12), event(13, { body: { pad: 'y'.repeat(300_000) } }), large(14)]);
    expect(outcomes.map((o) => o.kind)).toEqual(['sent', 'sent', 'sent', 'refused', 'sent']);
    expect(outcomes[3]).toEqual({ kind: 'refused', reason: 'MessageSizeExceeded', detail: 'the message is larger than 262144 bytes, the most big accepts' });
    expect((await receiveAll('big', 4)).map((m) => m.messageId).sort()).toEqual(['e-10', 'e-11', 'e-12', 'e-14']);
    // Two 100 kB messages fill a 256 kB batch: [10, 11]; 13 does not fit beside 12, so [12] goes; 13 fits no batch; then [14].
    expect(calls.sends).toHaveBeenCalledTimes(3);
    await sender.close();
  });

  it('refuses every message for a destination that does not exist: MessagingEntityNotFound never heals by waiting', async () => {
    const sender = new ServiceBusEventSender({ connectionString: emulator.connectionString });
    const outcomes = await sender.send('no-such-queue', [event(20), event(21)]);
    expect(outcomes).toEqual([
      expect.objectContaining({ kind: 'refused', reason: 'MessagingEntityNotFound' }),
      expect.objectContaining({ kind: 'refused', reason: 'MessagingEntityNotFound' }),
    ]);
    await sender.close();
  });

  it('throws any failure that is not a refusal as TransientSendError, naming the destination (here: no connection at all)', async () => {
    const sender = new ServiceBusEventSender({});
    const error = await sender.send('events', [event(30)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientSendError);
    expect((error as TransientSendError).message).toMatch(/^sending to events failed for now: no Service Bus connection/);
    await sender.close();
  });
});

describe('the wire form of an outbox message, and which broker errors are refusals', () => {
  it('leaves out a session and a correlation id it does not have, rather than sending them empty', () => {
    const message = event(1);
    expect(Object.keys(toServiceBusMessage(message)).sort()).toEqual(['applicationProperties', 'body', 'contentType', 'messageId', 'subject']);
    expect(toServiceBusMessage({ ...message, sessionId: 'o-1', correlationId: 'm-1' })).toMatchObject({ sessionId: 'o-1', correlationId: 'm-1' });
  });

  it('refuses for good only a missing or disabled entity and a message too large; everything else, access denied included, is tried again', () => {
    expect(['MessagingEntityNotFound', 'MessagingEntityDisabled', 'MessageSizeExceeded'].filter(isRefusal)).toHaveLength(3);
    expect(['UnauthorizedAccess', 'ServiceBusy', 'QuotaExceeded', '', undefined].filter(isRefusal)).toEqual([]);
  });
});
