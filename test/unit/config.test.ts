import { describe, expect, it } from 'vitest';
import { loadSettings, settingDefaults } from '../../src/config.js';
import { ConfigurationError } from '../../src/idempotency/index.js';

const minimal = {
  ServiceBusConnection: 'Endpoint=sb://127.0.0.1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://localhost:8081/',
};

function problemsOf(env: Record<string, string | undefined>): string {
  try {
    loadSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
  throw new Error('expected loadSettings to fail');
}

describe('loadSettings', () => {
  it('fills in documented defaults and freezes the result', () => {
    const settings = loadSettings(minimal);
    expect(settings).toMatchObject({
      ordersQueueName: 'orders',
      cosmos: { endpoint: 'https://localhost:8081/', databaseName: 'orders', ordersContainerName: 'orders' },
      markerTtlSeconds: 2_592_000,
      maxMessageBytes: 262_144,
      queue: { maxDeliveryCount: 10, lockDurationSeconds: 60, lockRenewalMaxSeconds: 300, messageTimeToLiveSeconds: 1_209_600, resubmitHorizonSeconds: 1_209_600 },
    });
    expect(settings.cosmos.key).toBeUndefined();
    expect(Object.isFrozen(settings.cosmos)).toBe(true);
    expect(settingDefaults.INBOX_MARKER_TTL_SECONDS).toBe(2_592_000);
  });

  it('accepts a managed-identity Service Bus connection instead of a connection string', () => {
    const { ServiceBusConnection: _omitted, ...rest } = minimal;
    expect(() => loadSettings({ ...rest, ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net' })).not.toThrow();
  });

  it('names every missing or bad setting at once', () => {
    const message = problemsOf({ COSMOS_ENDPOINT: 'not a url', QUEUE_MAX_DELIVERY_COUNT: 'ten' });
    expect(message).toContain('ORDERS_QUEUE_NAME');
    expect(message).toContain('COSMOS_ENDPOINT: must be an https:// URL');
    expect(message).toContain('QUEUE_MAX_DELIVERY_COUNT');
  });

  it('refuses a plain-http Cosmos endpoint: Cosmos DB and its emulator speak https only', () => {
    expect(problemsOf({ ...minimal, COSMOS_ENDPOINT: 'http://localhost:8081/' })).toContain('COSMOS_ENDPOINT: must be an https:// URL');
  });

  it('names the Service Bus connection when neither form is set', () => {
    const { ServiceBusConnection: _omitted, ...rest } = minimal;
    expect(problemsOf(rest)).toContain('ServiceBusConnection: set ServiceBusConnection (a connection string) or ServiceBusConnection__fullyQualifiedNamespace');
  });

  it('refuses a marker retention shorter than the redelivery horizon, with the arithmetic', () => {
    expect(problemsOf({ ...minimal, INBOX_MARKER_TTL_SECONDS: '86400' })).toContain(
      'INBOX_MARKER_TTL_SECONDS: inbox marker retention 86400 s is shorter than required: maxDeliveryCount 10 x (lock renewal 300 s + lockDuration 60 s)' +
        ' + message time-to-live 1209600 s + retry budget 86400 s + dead-letter resubmit horizon 1209600 s = 2509200 s',
    );
  });

  it('refuses a CA file that does not exist', () => {
    expect(problemsOf({ ...minimal, COSMOS_CA_CERT_PATH: '/nowhere/ca.pem' })).toContain('COSMOS_CA_CERT_PATH: names a file that does not exist');
  });

  it('treats an empty setting as unset', () => {
    expect(loadSettings({ ...minimal, CONSUMER_NAME: '', COSMOS_KEY: ' ' }).consumerName).toBeUndefined();
  });
});
