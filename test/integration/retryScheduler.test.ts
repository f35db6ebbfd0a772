import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRule, startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { QueueSettings, ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { ServiceBusRetryScheduler, chooseServiceBusClient } from '../../src/servicebus/index.js';

const settings: QueueSettings = {
  lockDurationMs: 30_000,
  maxDeliveryCount: 3,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 60_000,
  deadLetteringOnMessageExpiration: false,
};
const copy = {
  messageId: 'm-1~retry-1',
  body: '{"orderId":"o-1"}',
  subject: 'PaymentReceived',
  contentType: 'application/json',
  correlationId: 'c-1',
  applicationProperties: { 'retry-attempt': 1, 'idempotency-key': 'm-1', flag: true },
};

async function receiveOne(receiver: ServiceBusReceiver, maxWaitTimeInMs = 5000): Promise<ServiceBusReceivedMessage | undefined> {
  const [m] = await receiver.receiveMessages(1, { maxWaitTimeInMs });
  if (m) await receiver.completeMessage(m);
  return m;
}

describe('ServiceBusRetryScheduler, against the emulator through the SDK', () => {
  let emulator: ServiceBusEmulator;
  let client: ServiceBusClient;

  beforeAll(async () => {
    emulator = await startServiceBusEmulator({
      port: 0,
      queues: { orders: settings },
      topics: {
        events: {
          settings: { defaultMessageTimeToLiveMs: 3_600_000, duplicateDetectionWindowMs: 60_000 },
          subscriptions: {
            fulfilment: { settings, rules: [{ name: 'to-fulfilment', filter: { kind: 'correlation', fields: { to: 'fulfilment' } } }] },
            billing: { settings, rules: [{ name: 'to-billing', filter: { kind: 'correlation', fields: { to: 'billing' } } }] },
            audit: { settings, rules: [defaultRule] },
          },
        },
      },
    });
    client = new ServiceBusClient(emulator.connectionString);
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('schedules the copy on the queue for its time, with its id, body, subject, content type, correlation id and properties', async () => {
    const scheduler = new ServiceBusRetryScheduler({ connectionString: emulator.connectionString }, 'orders');
    const at = new Date(Date.now() + 60_000);
    await scheduler.schedule(copy, at);
    const receiver = client.createReceiver('orders');
    const [peeked] = await receiver.peekMessages(1, { fromSequenceNumber: Long.fromNumber(1) });
    expect(peeked).toMatchObject({
      messageId: 'm-1~retry-1',
      state: 'scheduled',
      subject: 'PaymentReceived',
      contentType: 'application/json',
      correlationId: 'c-1',
    });
    expect(peeked?.scheduledEnqueueTimeUtc?.getTime()).toBe(at.getTime());
    expect(peeked?.applicationProperties).toEqual(copy.applicationProperties);
    expect(peeked?.body).toBe('{"orderId":"o-1"}');
    expect(peeked?.to).toBeUndefined();
    await receiver.close();
    await scheduler.close();
  });

  it('addresses a copy for a subscription with `to`, so it reaches that subscriber and no other', async () => {
    const scheduler = new ServiceBusRetryScheduler({ connectionString: emulator.connectionString }, 'events', 'fulfilment');
    await scheduler.schedule({ ...copy, messageId: 'e-1~retry-1' }, new Date(Date.now() + 200));
    const fulfilment = client.createReceiver('events', 'fulfilment');
    const billing = client.createReceiver('events', 'billing');
    expect(await receiveOne(fulfilment)).toMatchObject({ messageId: 'e-1~retry-1', to: 'fulfilment' });
    expect(await receiveOne(billing, 500)).toBeUndefined();
    await Promise.all([fulfilment.close(), billing.close()]);
    await scheduler.close();
  });

  it('connects only when it first schedules: closing one never used is fine, and one without a connection fails on use, saying what to set', async () => {
    await new ServiceBusRetryScheduler({ connectionString: emulator.connectionString }, 'orders').close();
    const unconfigured = new ServiceBusRetryScheduler({}, 'orders');
    await expect(unconfigured.schedule(copy, new Date())).rejects.toThrow(
      'no Service Bus connection: set ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace',
    );
  });
});

describe('chooseServiceBusClient', () => {
  it('takes the connection string first, as the host does, then the namespace with the managed identity', () => {
    expect(chooseServiceBusClient({ connectionString: 'Endpoint=sb://x/', fullyQualifiedNamespace: 'ns.servicebus.windows.net' })).toEqual({
      kind: 'connection-string',
      connectionString: 'Endpoint=sb://x/',
    });
    expect(chooseServiceBusClient({ fullyQualifiedNamespace: 'ns.servicebus.windows.net' })).toEqual({
      kind: 'managed-identity',
      fullyQualifiedNamespace: 'ns.servicebus.windows.net',
    });
    expect(chooseServiceBusClient({ fullyQualifiedNamespace: 'ns.servicebus.windows.net', clientId: 'id-1' })).toEqual({
      kind: 'managed-identity',
      fullyQualifiedNamespace: 'ns.servicebus.windows.net',
      managedIdentityClientId: 'id-1',
    });
    expect(() => chooseServiceBusClient({ connectionString: '' })).toThrow(/no Service Bus connection/);
  });
});
