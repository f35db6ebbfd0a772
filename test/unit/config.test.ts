import { describe, expect, it } from 'vitest';
import { isFunctionDisabled, loadResubmitRetention, loadSettings, settingDefaults } from '../../src/config.js';
import { ConfigurationError } from '../../src/configurationError.js';
import { documentedDefaults } from '../support/documentedSettings.js';

const minimal = {
  ServiceBusConnection: 'Endpoint=sb://127.0.0.1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://localhost:8081/',
  RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
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
      queue: {
        maxDeliveryCount: 10,
        lockDurationSeconds: 60,
        lockRenewalMaxSeconds: 300,
        messageTimeToLiveSeconds: 1_209_600,
        resubmitHorizonSeconds: 1_209_600,
      },
    });
    expect(settings.cosmos.key).toBeUndefined();
    expect(Object.isFrozen(settings.cosmos)).toBe(true);
    expect(settingDefaults.INBOX_MARKER_TTL_SECONDS).toBe(2_592_000);
  });

  it('requires a retry state signing key of 32 characters or more while delayed retries are on, and refuses an unresolved Key Vault reference', () => {
    const { RETRY_STATE_SIGNING_KEY: _omitted, ...withoutKey } = minimal;
    expect(problemsOf(withoutKey)).toMatch(/RETRY_STATE_SIGNING_KEY: is required while DELAYED_RETRY_ENABLED is true/);
    expect(loadSettings({ ...withoutKey, DELAYED_RETRY_ENABLED: 'false' }).retry.stateSigningKey).toBeUndefined();
    expect(problemsOf({ ...minimal, RETRY_STATE_SIGNING_KEY: 'k'.repeat(31) })).toMatch(/RETRY_STATE_SIGNING_KEY: must be at least 32 characters/);
    expect(problemsOf({ ...minimal, RETRY_STATE_SIGNING_KEY: '@Microsoft.KeyVault(VaultName=v;SecretName=retry-state-signing-key)' })).toMatch(
      /RETRY_STATE_SIGNING_KEY: is still a Key Vault reference/,
    );
    expect(loadSettings(minimal).retry.stateSigningKey).toBe('k'.repeat(32));
  });

  it('takes RETRY_STATE_SIGNING_KEY_PREVIOUS, optional, under the same rules as the key (32 characters or more, resolved)', () => {
    expect(loadSettings(minimal).retry.previousStateSigningKey).toBeUndefined();
    expect(loadSettings({ ...minimal, RETRY_STATE_SIGNING_KEY_PREVIOUS: 'p'.repeat(32) }).retry).toMatchObject({
      stateSigningKey: 'k'.repeat(32),
      previousStateSigningKey: 'p'.repeat(32),
    });
    expect(problemsOf({ ...minimal, RETRY_STATE_SIGNING_KEY_PREVIOUS: 'p'.repeat(31) })).toMatch(
      /RETRY_STATE_SIGNING_KEY_PREVIOUS: must be at least 32 characters/,
    );
    expect(
      problemsOf({ ...minimal, RETRY_STATE_SIGNING_KEY_PREVIOUS: '@Microsoft.KeyVault(VaultName=v;SecretName=retry-state-signing-key-previous)' }),
    ).toMatch(/RETRY_STATE_SIGNING_KEY_PREVIOUS: is still a Key Vault reference/);
  });

  it('accepts a managed-identity Service Bus connection instead of a connection string', () => {
    const { ServiceBusConnection: _omitted, ...rest } = minimal;
    expect(() => loadSettings({ ...rest, ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net' })).not.toThrow();
  });

  it('has the defaults the settings reference states, each one of them', () => {
    const documented = documentedDefaults();
    for (const [name, value] of Object.entries(settingDefaults)) {
      // PARKED_ITEM_HORIZON_SECONDS defaults to another setting, which the reference names instead of a value.
      const expected = name === 'PARKED_ITEM_HORIZON_SECONDS' ? 'DLQ_RESUBMIT_HORIZON_SECONDS' : String(value);
      expect(documented.get(name), name).toBe(expected);
    }
    expect(settingDefaults.PARKED_ITEM_HORIZON_SECONDS).toBeUndefined();
  });

  it('applies every default when a setting is absent', () => {
    const s = loadSettings(minimal);
    expect(s).toMatchObject({
      maxConcurrencyAttempts: 10,
      parking: { horizonSeconds: 1_209_600, sweepMinAgeSeconds: 60, sweepMaxItemsPerRun: 500 },
      retry: {
        inInvocationMs: 10_000,
        firstDelayMs: 30_000,
        maxDelayMs: 900_000,
        budgetMs: 86_400_000,
        delayedRetryEnabled: true,
        stateSigningKey: 'k'.repeat(32),
      },
      outbox: {
        orderEventsTopicName: 'order-events',
        publishedTtlSeconds: 604_800,
        sweepMinAgeSeconds: 60,
        lagAlertSeconds: 300,
        sweepMaxItemsPerRun: 500,
        markConcurrency: 16,
      },
      shipments: { fulfilmentSubscriptionName: 'fulfilment', carrierTimeoutMs: 10_000, leaseSeconds: 60, reconcileMaxAttempts: 5, reconcileBatchSize: 50 },
      intake: { maxBodyBytes: 65_536, leaseSeconds: 10, keyRetentionSeconds: 172_800 },
    });
    expect(loadSettings({ ...minimal, DELAYED_RETRY_ENABLED: 'false', PARKED_ITEM_HORIZON_SECONDS: '7200' })).toMatchObject({
      retry: { delayedRetryEnabled: false },
      parking: { horizonSeconds: 7200 },
    });
  });

  it('trims the white space the portal leaves around a value, and takes names of any length', () => {
    const s = loadSettings({
      ...minimal,
      ORDERS_QUEUE_NAME: ' orders-eu ',
      COSMOS_KEY: ' key ',
      COSMOS_DATABASE: ' db-1 ',
      COSMOS_ORDERS_CONTAINER: ' c-1 ',
      CONSUMER_NAME: ' billing ',
      PARKED_SWEEP_SCHEDULE: ' 0 */7 * * * * ',
      ORDER_EVENTS_TOPIC_NAME: ' events-1 ',
      COSMOS_LEASES_CONTAINER: ' leases-1 ',
      OUTBOX_SWEEP_SCHEDULE: ' 0 */3 * * * * ',
      FULFILMENT_SUBSCRIPTION_NAME: ' ship-1 ',
      SHIPMENT_RECONCILE_SCHEDULE: ' 0 */9 * * * * ',
      ServiceBusConnection__clientId: ' id-1 ',
    });
    expect(s).toMatchObject({
      ordersQueueName: 'orders-eu',
      cosmos: { key: 'key', databaseName: 'db-1', ordersContainerName: 'c-1' },
      consumerName: 'billing',
      outbox: { orderEventsTopicName: 'events-1' },
      shipments: { fulfilmentSubscriptionName: 'ship-1' },
      serviceBus: { connectionString: minimal.ServiceBusConnection, clientId: 'id-1' },
    });
  });

  it('passes the Service Bus connection through in either form', () => {
    const { ServiceBusConnection: _unused, ...withoutString } = minimal;
    expect(loadSettings({ ...withoutString, ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net' }).serviceBus).toEqual({
      connectionString: undefined,
      fullyQualifiedNamespace: 'ns.servicebus.windows.net',
      clientId: undefined,
    });
  });

  it('takes a setting present with no value as unset', () => {
    expect(loadSettings({ ...minimal, CONSUMER_NAME: undefined, COSMOS_DATABASE: undefined }).cosmos.databaseName).toBe('orders');
  });

  it('takes only the schemes it names: https for Cosmos, http or https for the carrier', () => {
    expect(problemsOf({ ...minimal, COSMOS_ENDPOINT: 'httpsx://localhost:8081/' })).toContain('COSMOS_ENDPOINT: must be an https:// URL');
    expect(problemsOf({ ...minimal, COSMOS_ENDPOINT: 'xhttps://localhost:8081/' })).toContain('COSMOS_ENDPOINT: must be an https:// URL');
    for (const url of ['ftp://carrier/', 'xhttp://carrier/', 'httpsx://carrier/'])
      expect(problemsOf({ ...minimal, CARRIER_API_URL: url }), url).toContain('CARRIER_API_URL: must be an http(s):// URL');
    expect(loadSettings({ ...minimal, CARRIER_API_URL: 'http://127.0.0.1:7080/' }).shipments.carrierApiUrl).toBe('http://127.0.0.1:7080/');
  });

  it('takes the carrier timeout and the reconciler batch at their maximum', () => {
    expect(
      loadSettings({ ...minimal, CARRIER_TIMEOUT_MS: '120000', SHIPMENT_LEASE_SECONDS: '360', SHIPMENT_RECONCILE_BATCH_SIZE: '1000' }).shipments,
    ).toMatchObject({ carrierTimeoutMs: 120_000, reconcileBatchSize: 1000 });
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

  it('refuses a parking horizon that parked items would not outlive, naming the settings', () => {
    expect(problemsOf({ ...minimal, PARKED_ITEM_HORIZON_SECONDS: String(20 * 86_400) })).toContain(
      'INBOX_MARKER_TTL_SECONDS: parked items are kept 2592000 s (INBOX_MARKER_TTL_SECONDS), shorter than required: parking horizon 1728000 s (PARKED_ITEM_HORIZON_SECONDS)' +
        ' + dead-letter resubmit horizon 1209600 s (DLQ_RESUBMIT_HORIZON_SECONDS) = 2937600 s, so an item whose order never came could expire before it is rejected',
    );
    expect(loadSettings({ ...minimal, PARKED_ITEM_HORIZON_SECONDS: String(16 * 86_400) }).parking.horizonSeconds).toBe(16 * 86_400);
  });

  // Each of these becomes a document's ttl, and Cosmos DB refuses a ttl above 2147483647 s: above it, every write
  // carrying it would fail (a payment claim keeps twice the marker lifetime).
  it.each([
    ['INBOX_MARKER_TTL_SECONDS', 1_073_741_823],
    ['DLQ_RESUBMIT_HORIZON_SECONDS', 2_147_483_647],
    ['INTAKE_KEY_RETENTION_SECONDS', 2_147_483_647],
    ['OUTBOX_PUBLISHED_TTL_SECONDS', 2_147_483_647],
  ])('bounds %s, a document lifetime, at %i: the largest ttl Cosmos DB takes', (name, most) => {
    const env = { ...minimal, INBOX_MARKER_TTL_SECONDS: String(1_073_741_823), PARKED_ITEM_HORIZON_SECONDS: '1' };
    const problemsIfAny = (e: Record<string, string>) => {
      try {
        loadSettings(e);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problemsIfAny({ ...env, [name]: String(most) })).not.toContain(`${name}: must be at most`);
    expect(problemsOf({ ...env, [name]: String(most + 1) })).toContain(`${name}: must be at most ${most} (Cosmos DB's largest ttl is 2147483647 s`);
  });

  it('bounds a sweep run: SWEEP_MAX_ITEMS_PER_RUN between 1 and 5000, for both sweepers', () => {
    const settings = loadSettings({ ...minimal, SWEEP_MAX_ITEMS_PER_RUN: '40' });
    expect([settings.parking.sweepMaxItemsPerRun, settings.outbox.sweepMaxItemsPerRun]).toEqual([40, 40]);
    expect(problemsOf({ ...minimal, SWEEP_MAX_ITEMS_PER_RUN: '5001' })).toContain(
      'SWEEP_MAX_ITEMS_PER_RUN: must be at most 5000 (one run holds a page in memory)',
    );
    expect(problemsOf({ ...minimal, SWEEP_MAX_ITEMS_PER_RUN: '0' })).toContain('SWEEP_MAX_ITEMS_PER_RUN:');
  });

  it("bounds the outbox publisher's marks in flight: OUTBOX_MARK_CONCURRENCY between 1 and 100", () => {
    expect(loadSettings({ ...minimal, OUTBOX_MARK_CONCURRENCY: '100' }).outbox.markConcurrency).toBe(100);
    expect(loadSettings({ ...minimal, OUTBOX_MARK_CONCURRENCY: '1' }).outbox.markConcurrency).toBe(1);
    expect(problemsOf({ ...minimal, OUTBOX_MARK_CONCURRENCY: '101' })).toContain(
      'OUTBOX_MARK_CONCURRENCY: must be at most 100 (a change-feed page holds at most 100 documents',
    );
    expect(problemsOf({ ...minimal, OUTBOX_MARK_CONCURRENCY: '0' })).toContain('OUTBOX_MARK_CONCURRENCY:');
    expect(problemsOf({ ...minimal, OUTBOX_MARK_CONCURRENCY: '2.5' })).toContain('OUTBOX_MARK_CONCURRENCY:');
  });

  it('refuses a CA file that does not exist, and takes one that does', () => {
    expect(problemsOf({ ...minimal, COSMOS_CA_CERT_PATH: '/nowhere/ca.pem' })).toContain('COSMOS_CA_CERT_PATH: names a file that does not exist');
    expect(loadSettings({ ...minimal, COSMOS_CA_CERT_PATH: 'package.json' }).cosmos.caCertificatePath).toBe('package.json');
  });

  it('caps the in-invocation retry at 60 s, well inside the lock', () => {
    expect(loadSettings({ ...minimal, TRANSIENT_RETRY_IN_INVOCATION_MS: '60000' }).retry.inInvocationMs).toBe(60_000);
    expect(problemsOf({ ...minimal, TRANSIENT_RETRY_IN_INVOCATION_MS: '60001' })).toContain(
      'TRANSIENT_RETRY_IN_INVOCATION_MS: must be at most 60000 (well inside the lock)',
    );
  });

  it('refuses a delayed-retry cap below the first delay, and takes one equal to it', () => {
    expect(problemsOf({ ...minimal, DELAYED_RETRY_FIRST_DELAY_SECONDS: '60', DELAYED_RETRY_MAX_DELAY_SECONDS: '59' })).toContain(
      'DELAYED_RETRY_MAX_DELAY_SECONDS: must be at least DELAYED_RETRY_FIRST_DELAY_SECONDS (60)',
    );
    expect(loadSettings({ ...minimal, DELAYED_RETRY_FIRST_DELAY_SECONDS: '60', DELAYED_RETRY_MAX_DELAY_SECONDS: '60' }).retry.maxDelayMs).toBe(60_000);
    expect(problemsOf({ ...minimal, DELAYED_RETRY_ENABLED: 'yes' })).toContain('DELAYED_RETRY_ENABLED: must be true or false');
  });

  it('treats an empty setting as unset', () => {
    expect(loadSettings({ ...minimal, CONSUMER_NAME: '', COSMOS_KEY: ' ' }).consumerName).toBeUndefined();
  });

  describe('shipments', () => {
    it('defaults: fulfilment, a 10 s carrier timeout inside a 60 s lease, 5 rounds of 50', () => {
      expect(loadSettings(minimal).shipments).toEqual({
        fulfilmentSubscriptionName: 'fulfilment',
        carrierApiUrl: undefined,
        carrierApiKey: undefined,
        carrierTimeoutMs: 10_000,
        leaseSeconds: 60,
        reconcileMaxAttempts: 5,
        reconcileBatchSize: 50,
      });
    });

    it('refuses a lease that a look-up and a call could outlast', () => {
      expect(problemsOf({ ...minimal, CARRIER_TIMEOUT_MS: '30000', SHIPMENT_LEASE_SECONDS: '89' })).toContain(
        'SHIPMENT_LEASE_SECONDS: must be at least 3 x CARRIER_TIMEOUT_MS (90 s)',
      );
      expect(loadSettings({ ...minimal, CARRIER_TIMEOUT_MS: '30000', SHIPMENT_LEASE_SECONDS: '90' }).shipments.leaseSeconds).toBe(90);
    });

    it('refuses a carrier URL that is not http(s), and a Key Vault reference the platform did not resolve', () => {
      expect(problemsOf({ ...minimal, CARRIER_API_URL: 'ftp://carrier.example/' })).toContain('CARRIER_API_URL: must be an http(s):// URL');
      expect(problemsOf({ ...minimal, CARRIER_API_KEY: '@Microsoft.KeyVault(VaultName=kv;SecretName=carrier-api-key)' })).toContain(
        'CARRIER_API_KEY: is still a Key Vault reference',
      );
      expect(loadSettings({ ...minimal, CARRIER_API_URL: 'https://carrier.example/v1/', CARRIER_API_KEY: 'k' }).shipments).toMatchObject({
        carrierApiUrl: 'https://carrier.example/v1/',
        carrierApiKey: 'k',
      });
    });

    it('refuses the carrier key, naming it, when the carrier URL is not https (a loopback address excepted), and such a URL itself', () => {
      const plain = problemsOf({ ...minimal, CARRIER_API_URL: 'http://carrier.example/v1/', CARRIER_API_KEY: 'k' });
      expect(plain).toContain('CARRIER_API_KEY: is refused: CARRIER_API_URL is not https://, so the key would cross the network in clear text');
      expect(plain).toContain('CARRIER_API_URL: must be https:// (plain http:// only to a loopback address: 127.0.0.0/8, ::1, localhost)');
      expect(problemsOf({ ...minimal, CARRIER_API_URL: 'http://10.0.0.7:7080/' })).toContain('CARRIER_API_URL: must be https://');
      for (const url of ['http://127.0.0.1:7080/', 'http://127.200.3.4/', 'http://localhost:7080/', 'http://[::1]:7080/', 'https://carrier.example/v1/']) {
        expect(loadSettings({ ...minimal, CARRIER_API_URL: url, CARRIER_API_KEY: 'k' }).shipments.carrierApiKey, url).toBe('k');
      }
    });

    it('bounds the carrier timeout and the reconciler batch', () => {
      expect(problemsOf({ ...minimal, CARRIER_TIMEOUT_MS: '99' })).toContain('CARRIER_TIMEOUT_MS');
      expect(problemsOf({ ...minimal, CARRIER_TIMEOUT_MS: '120001', SHIPMENT_LEASE_SECONDS: '1000' })).toContain('CARRIER_TIMEOUT_MS: must be at most 120000');
      expect(problemsOf({ ...minimal, SHIPMENT_RECONCILE_BATCH_SIZE: '1001' })).toContain('SHIPMENT_RECONCILE_BATCH_SIZE: must be at most 1000');
      expect(problemsOf({ ...minimal, SHIPMENT_RECONCILE_MAX_ATTEMPTS: '0' })).toContain('SHIPMENT_RECONCILE_MAX_ATTEMPTS');
    });
  });

  describe('the HTTP intake', () => {
    it('refuses a key retention shorter than the client retry horizon plus the lease, naming both', () => {
      const problems = problemsOf({
        ...minimal,
        INTAKE_CLIENT_RETRY_HORIZON_SECONDS: '3600',
        INTAKE_LEASE_SECONDS: '10',
        INTAKE_KEY_RETENTION_SECONDS: '3609',
      });
      expect(problems).toContain(
        'INTAKE_KEY_RETENTION_SECONDS: idempotency key retention 3609 s is shorter than required: client retry horizon 3600 s + lease 10 s = 3610 s',
      );
      expect(
        loadSettings({ ...minimal, INTAKE_CLIENT_RETRY_HORIZON_SECONDS: '3600', INTAKE_LEASE_SECONDS: '10', INTAKE_KEY_RETENTION_SECONDS: '3610' }).intake
          .keyRetentionSeconds,
      ).toBe(3610);
    });

    it('refuses a body limit above what a message may carry', () => {
      expect(problemsOf({ ...minimal, MAX_MESSAGE_BYTES: '65536', INTAKE_MAX_BODY_BYTES: '65537' })).toContain(
        'INTAKE_MAX_BODY_BYTES: must be at most MAX_MESSAGE_BYTES (65536)',
      );
      expect(loadSettings({ ...minimal, MAX_MESSAGE_BYTES: '65536', INTAKE_MAX_BODY_BYTES: '65536' }).intake.maxBodyBytes).toBe(65536);
    });

    it('defaults to 64 KiB bodies, a 10 s lease, 48 h of retention against a 24 h horizon, and one shared caller scope', () => {
      expect(loadSettings(minimal).intake).toEqual({ maxBodyBytes: 65536, leaseSeconds: 10, keyRetentionSeconds: 172_800, callerIdentity: 'shared' });
    });

    it('reads INTAKE_CALLER_IDENTITY entra, and refuses any other value naming the two it takes', () => {
      expect(loadSettings({ ...minimal, INTAKE_CALLER_IDENTITY: 'entra' }).intake.callerIdentity).toBe('entra');
      expect(problemsOf({ ...minimal, INTAKE_CALLER_IDENTITY: 'Entra ID' })).toContain(
        'INTAKE_CALLER_IDENTITY: must be shared or entra (entra only with App Service authentication on: intakeAuthEnabled)',
      );
    });
  });

  it('reads a function disabled by its app setting, in either spelling the host accepts', () => {
    expect(isFunctionDisabled('requestShipment', { 'AzureWebJobs.requestShipment.Disabled': 'true' })).toBe(true);
    expect(isFunctionDisabled('requestShipment', { AzureWebJobs__requestShipment__Disabled: '1' })).toBe(true);
    expect(isFunctionDisabled('requestShipment', { 'AzureWebJobs.requestShipment.Disabled': ' TRUE ' })).toBe(true);
    expect(isFunctionDisabled('requestShipment', { 'AzureWebJobs.requestShipment.Disabled': 'False' })).toBe(false);
    expect(isFunctionDisabled('requestShipment', { 'AzureWebJobs.reconcileShipments.Disabled': 'true' })).toBe(false);
    expect(isFunctionDisabled('requestShipment', {})).toBe(false);
  });
});

describe('loadResubmitRetention', () => {
  it("reads the retention settings with the app's defaults, and works out the margin a resubmitted copy needs", () => {
    expect(loadResubmitRetention({})).toEqual({
      markerTtlSeconds: 2_592_000,
      marginSeconds: 90_000,
      marginExplanation:
        'QUEUE_MAX_DELIVERY_COUNT 10 x (LOCK_RENEWAL_MAX_SECONDS 300 s + QUEUE_LOCK_DURATION_SECONDS 60 s) + TRANSIENT_RETRY_BUDGET_SECONDS 86400 s = 90000 s',
    });
    const env = {
      INBOX_MARKER_TTL_SECONDS: '7200',
      QUEUE_MAX_DELIVERY_COUNT: '2',
      QUEUE_LOCK_DURATION_SECONDS: '30',
      LOCK_RENEWAL_MAX_SECONDS: '0',
      TRANSIENT_RETRY_BUDGET_SECONDS: ' ',
    };
    expect(loadResubmitRetention(env)).toMatchObject({ markerTtlSeconds: 7200, marginSeconds: 86_460 });
  });

  it('names each bad setting, as the app would at start-up', () => {
    expect(() => loadResubmitRetention({ INBOX_MARKER_TTL_SECONDS: 'a month', QUEUE_LOCK_DURATION_SECONDS: '1' })).toThrow(
      /INBOX_MARKER_TTL_SECONDS: .*; QUEUE_LOCK_DURATION_SECONDS: /,
    );
  });
});
