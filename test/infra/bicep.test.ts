import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { timeSpanToMs } from '../../emulators/functions-host/hostSettings.js';
import { parseNcrontab } from '../../emulators/functions-host/timerTriggers.js';
import { loadSettings } from '../../src/config.js';
import { checkMarkerRetention } from '../../src/idempotency/index.js';
import { testTenantId } from './armExpressions.js';
import { expandDeployment, isRuntime, testSubscriptionId } from './armTemplate.js';
import type { DeployedResource, Deployment } from './armTemplate.js';
import { bicepCli, buildTemplate } from './bicepCli.js';

const bicep = bicepCli();
const suites = bicep ? [{ bicep }] : [];
if (!bicep) console.log('Bicep template tests: skipped because the Bicep CLI could not be restored from NuGet (is the dotnet CLI installed?)');

const queueFile = JSON.parse(readFileSync('infra/servicebus-queues.json', 'utf8')) as {
  queues: { orders: Record<string, number | boolean> };
  topics: Record<string, { maxSizeInMegabytes?: number }>;
  operations: { deadLetterResubmitHorizonSeconds: number; inboxMarkerTtlSeconds: number; lockRenewalMaxSeconds: number; transientRetryBudgetSeconds: number };
};
const hostLockRenewalSeconds = () =>
  timeSpanToMs(
    (JSON.parse(readFileSync('host.json', 'utf8')) as { extensions: { serviceBus: { maxAutoLockRenewalDuration: string } } }).extensions.serviceBus
      .maxAutoLockRenewalDuration,
  ) / 1000;
const userObjectId = '11111111-2222-3333-4444-555555555555';
/** What azd always passes: the environment, its region, and the signing key the preprovision hook keeps in the environment. */
const retryStateSigningKey = 'r'.repeat(64);
const required = { environmentName: 'ci', location: 'westeurope', retryStateSigningKey };
const operatorsObjectId = '99999999-8888-7777-6666-555555555555';

/** Reads an ISO 8601 duration (P1DT2H3M4S) as seconds; deliberately not the template's arithmetic reversed. */
function isoSeconds(duration: unknown): number {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(String(duration));
  if (!match || duration === 'P' || String(duration).endsWith('T')) throw new Error(`not an ISO 8601 duration: ${String(duration)}`);
  const [, d = '0', h = '0', m = '0', s = '0'] = match;
  return Number(d) * 86_400 + Number(h) * 3_600 + Number(m) * 60 + Number(s);
}

describe.runIf(suites.length > 0)('infra/main.bicep (Bicep CLI from NuGet)', () => {
  const cli = suites[0]?.bicep ?? '';
  let deployment: Deployment;
  let compiled: string;
  const of = (type: string) => deployment.resources.filter((r) => r.type === type && !r.existing);
  const one = (type: string) => {
    const found = of(type);
    expect(found, type).toHaveLength(1);
    return found[0]!;
  };
  const props = (r: DeployedResource) => r.body.properties as Record<string, unknown>;

  beforeAll(() => {
    const build = buildTemplate(cli, 'infra/main.bicep');
    expect({ status: build.status, diagnostics: build.diagnostics }).toEqual({ status: 0, diagnostics: '' });
    compiled = build.compiled;
    deployment = expandDeployment(JSON.parse(compiled), { ...required, principalId: userObjectId });
  }, 300_000);

  it('lints with no error or warning under infra/bicepconfig.json', () => {
    const lint = spawnSync(cli, ['lint', 'infra/main.bicep'], { encoding: 'utf8' });
    expect({ status: lint.status, diagnostics: `${lint.stdout}${lint.stderr}`.trim() }).toEqual({ status: 0, diagnostics: '' });
  });

  it('keeps every linter rule at error, except those with a comment above them that says why', () => {
    const lines = readFileSync('infra/bicepconfig.json', 'utf8').split('\n');
    const below = lines.flatMap((line, i) =>
      /"level": "(off|warning|info)"/.test(line) ? [{ rule: line.trim(), explained: /^\s*\/\//.test(lines[i - 1] ?? '') }] : [],
    );
    expect(below.filter((r) => !r.explained)).toEqual([]);
    expect(below.map((r) => /^"([a-z-]+)"/.exec(r.rule)?.[1])).toEqual(['use-recent-api-versions', 'use-recent-module-versions']);
  });

  it('uses only local modules, so it compiles offline', () => {
    // Modules and imports: a local file (from main.bicep under modules/, from a module beside it), never a registry.
    const bicepSources = execFileSync('grep', ['-rhoE', "(module [a-zA-Z]+|import \\{[^}]+\\} from) '[^']+'", 'infra'], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(bicepSources.length).toBeGreaterThan(3);
    for (const line of bicepSources) expect(line).toMatch(/'(modules\/)?[a-zA-Z]+\.bicep'$/);
  });

  describe('the orders queue', () => {
    const orders = queueFile.queues.orders;
    it('has duplicate detection on, with the window of the queue file', () => {
      const queue = one('Microsoft.ServiceBus/namespaces/queues');
      expect(queue.name).toMatch(/\/orders$/);
      expect(props(queue).requiresDuplicateDetection).toBe(true);
      expect(isoSeconds(props(queue).duplicateDetectionHistoryTimeWindow)).toBe(orders.duplicateDetectionHistoryTimeWindowSeconds);
      expect(props(queue).duplicateDetectionHistoryTimeWindow).toBe('PT10M');
    });

    it("dead-letters expired messages and gives up after maxDeliveryCount, with the file's lock and time-to-live", () => {
      const queue = props(one('Microsoft.ServiceBus/namespaces/queues'));
      expect(queue.deadLetteringOnMessageExpiration).toBe(true);
      expect(queue.maxDeliveryCount).toBe(orders.maxDeliveryCount);
      expect(isoSeconds(queue.lockDuration)).toBe(orders.lockDurationSeconds);
      expect(isoSeconds(queue.defaultMessageTimeToLive)).toBe(orders.defaultMessageTimeToLiveSeconds);
      expect([queue.lockDuration, queue.defaultMessageTimeToLive]).toEqual(['PT1M', 'P14D']);
    });

    it("caps what senders can pile up: the queue and the topic have a maximum size (a flood fills the broker, not the app's storage)", () => {
      expect(props(one('Microsoft.ServiceBus/namespaces/queues')).maxSizeInMegabytes).toBe(5120);
      expect(props(one('Microsoft.ServiceBus/namespaces/topics')).maxSizeInMegabytes).toBe(5120);
      expect([orders.maxSizeInMegabytes, queueFile.topics['order-events']?.maxSizeInMegabytes]).toEqual([5120, 5120]);
    });

    it('deploys the topics of the queue file: subscriptions with their lock, limit and rules, and no catch-all $Default beside a filter', () => {
      const topic = one('Microsoft.ServiceBus/namespaces/topics');
      expect(topic.name).toMatch(/\/order-events$/);
      expect(props(topic)).toMatchObject({ requiresDuplicateDetection: true, duplicateDetectionHistoryTimeWindow: 'PT10M', defaultMessageTimeToLive: 'P14D' });
      const subscriptions = of('Microsoft.ServiceBus/namespaces/topics/subscriptions');
      expect(subscriptions.map((s) => s.name.split('/').slice(-2).join('/')).sort()).toEqual(['order-events/audit', 'order-events/fulfilment']);
      for (const subscription of subscriptions)
        expect(props(subscription)).toMatchObject({ lockDuration: 'PT1M', maxDeliveryCount: 10, deadLetteringOnMessageExpiration: true });
      // audit keeps each order's events in order: a session per order.
      expect(Object.fromEntries(subscriptions.map((s) => [s.name.split('/').pop(), props(s).requiresSession]))).toEqual({ audit: true, fulfilment: false });
      // Events (addressed to nobody) reach both; a delayed-retry or resubmitted copy is addressed (`to`)
      // to the one subscription that asked for it. Neither keeps the catch-all $Default.
      const rules = of('Microsoft.ServiceBus/namespaces/topics/subscriptions/rules');
      expect(Object.fromEntries(rules.map((r) => [r.name.split('/').slice(-2).join('/'), props(r)]))).toEqual({
        'fulfilment/$Default': { filterType: 'SqlFilter', sqlFilter: { sqlExpression: '1=0' } },
        'fulfilment/order-accepted': { filterType: 'SqlFilter', sqlFilter: { sqlExpression: "sys.Label = 'OrderAccepted' AND sys.To IS NULL" } },
        'fulfilment/retries': { filterType: 'CorrelationFilter', correlationFilter: expect.objectContaining({ to: 'fulfilment' }) },
        'audit/$Default': { filterType: 'SqlFilter', sqlFilter: { sqlExpression: '1=0' } },
        'audit/events': { filterType: 'SqlFilter', sqlFilter: { sqlExpression: 'sys.To IS NULL' } },
      });
    });

    it('lives in a Standard namespace (Basic has no duplicate detection)', () => {
      expect(one('Microsoft.ServiceBus/namespaces').body.sku).toEqual({ name: 'Standard', tier: 'Standard' });
    });
  });

  const containerNamed = (name: string) => {
    const found = of('Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers').filter((c) => c.name.endsWith(`/${name}`));
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };

  describe('the orders container', () => {
    it('is partitioned by /orderId, with TTL on and no default expiry', () => {
      const container = props(containerNamed('orders')).resource as Record<string, unknown>;
      expect(container.partitionKey).toEqual({ paths: ['/orderId'], kind: 'Hash', version: 2 });
      expect(container.defaultTtl).toBe(-1);
    });

    it('indexes the fields the operator tool filters on, and nothing else', () => {
      const container = props(containerNamed('orders')).resource as { indexingPolicy: Record<string, unknown> };
      expect(container.indexingPolicy.excludedPaths).toEqual([{ path: '/*' }]);
      expect(container.indexingPolicy.includedPaths).toEqual(
        expect.arrayContaining([
          { path: '/docType/?' },
          { path: '/messageId/?' },
          { path: '/state/?' },
          { path: '/parkedAt/?' },
          { path: '/createdAt/?' },
          { path: '/leaseExpiresAt/?' },
        ]),
      );
    });

    it('has a leases container beside it for the change feed trigger, partitioned by /id as the trigger requires', () => {
      expect(of('Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers')).toHaveLength(2);
      expect(props(containerNamed('leases')).resource).toEqual({ id: 'leases', partitionKey: { paths: ['/id'], kind: 'Hash', version: 2 } });
    });

    it('is in a serverless account', () => {
      expect(props(one('Microsoft.DocumentDB/databaseAccounts')).capabilities).toEqual([{ name: 'EnableServerless' }]);
    });
  });

  it('turns local (key) authentication off everywhere', () => {
    expect(props(one('Microsoft.ServiceBus/namespaces')).disableLocalAuth).toBe(true);
    expect(props(one('Microsoft.DocumentDB/databaseAccounts')).disableLocalAuth).toBe(true);
    expect(props(one('Microsoft.Storage/storageAccounts')).allowSharedKeyAccess).toBe(false);
    expect(props(one('Microsoft.Insights/components')).DisableLocalAuth).toBe(true);
    expect((props(one('Microsoft.OperationalInsights/workspaces')).features as Record<string, unknown>).disableLocalAuth).toBe(true);
  });

  it('requires TLS 1.2 on every endpoint that has the setting', () => {
    expect(props(one('Microsoft.ServiceBus/namespaces')).minimumTlsVersion).toBe('1.2');
    expect(props(one('Microsoft.DocumentDB/databaseAccounts')).minimalTlsVersion).toBe('Tls12');
    expect(props(one('Microsoft.Storage/storageAccounts')).minimumTlsVersion).toBe('TLS1_2');
    expect((props(one('Microsoft.Web/sites')).siteConfig as Record<string, unknown>).minTlsVersion).toBe('1.2');
  });

  describe('the function app', () => {
    const appSettings = () =>
      Object.fromEntries(
        ((props(one('Microsoft.Web/sites')).siteConfig as { appSettings: { name: string; value: unknown }[] }).appSettings ?? []).map((s) => [s.name, s.value]),
      );

    it('runs Node 22 on Flex Consumption, tagged for azd, with its user-assigned identity', () => {
      const app = one('Microsoft.Web/sites');
      const config = props(app).functionAppConfig as { runtime: unknown; deployment: { storage: { authentication: { type: string } } } };
      expect(config.runtime).toEqual({ name: 'node', version: '22' });
      expect(config.deployment.storage.authentication.type).toBe('UserAssignedIdentity');
      expect((app.body.tags as Record<string, string>)['azd-service-name']).toBe('api');
      expect((app.body.identity as { type: string }).type).toBe('UserAssigned');
      expect(props(app).httpsOnly).toBe(true);
      expect(one('Microsoft.Web/serverfarms').body.sku).toEqual({ tier: 'FlexConsumption', name: 'FC1' });
    });

    it('connects to every service by identity', () => {
      expect(appSettings()).toMatchObject({
        AzureWebJobsStorage__credential: 'managedidentity',
        ServiceBusConnection__credential: 'managedidentity',
        ServiceBusConnection__fullyQualifiedNamespace: expect.stringMatching(/\.servicebus\.windows\.net$/),
        ORDERS_QUEUE_NAME: 'orders',
        APPLICATIONINSIGHTS_AUTHENTICATION_STRING: expect.stringMatching(/;Authorization=AAD$/),
      });
      expect(appSettings()).not.toHaveProperty('COSMOS_KEY');
    });

    it("samples nothing: the host's exporter and the worker's distro read OTEL_TRACES_SAMPLER (host.json's samplingSettings are not read in OpenTelemetry mode)", () => {
      expect(appSettings()).toMatchObject({ OTEL_TRACES_SAMPLER: 'microsoft.fixed_percentage', OTEL_TRACES_SAMPLER_ARG: '1.0' });
    });

    it("gives the outbox publisher's Cosmos DB trigger an identity connection and the names its bindings resolve", () => {
      expect(appSettings()).toMatchObject({
        CosmosDbConnection__accountEndpoint: appSettings().COSMOS_ENDPOINT,
        CosmosDbConnection__credential: 'managedidentity',
        CosmosDbConnection__clientId: appSettings().AZURE_CLIENT_ID,
        COSMOS_LEASES_CONTAINER: 'leases',
        ORDER_EVENTS_TOPIC_NAME: 'order-events',
      });
      expect(appSettings()).not.toHaveProperty('CosmosDbConnection');
      const schedule = String(appSettings().OUTBOX_SWEEP_SCHEDULE);
      expect(parseNcrontab(schedule, 'sweepOutbox').nextRun(new Date('2026-12-01T10:01:00Z'))?.toISOString()).toBe('2026-12-01T10:01:30.000Z');
    });

    it("gives the sweeper's timer a six-field NCRONTAB schedule (the host will not start the function without it)", () => {
      const schedule = String(appSettings().PARKED_SWEEP_SCHEDULE);
      expect(parseNcrontab(schedule, 'sweepParkedItems').nextRun(new Date('2026-12-01T10:01:00Z'))?.toISOString()).toBe('2026-12-01T10:05:00.000Z');
    });

    it("passes the app's own start-up validation, retention check included, with the deployed settings", () => {
      // The platform resolves a Key Vault reference before the app reads it.
      const resolved = (v: unknown) =>
        isRuntime(v)
          ? 'https://cosmos.example.documents.azure.com:443/'
          : String(v).startsWith('@Microsoft.KeyVault(')
            ? 'resolved-secret-of-at-least-32-characters'
            : String(v);
      const settings = Object.fromEntries(Object.entries(appSettings()).map(([k, v]) => [k, resolved(v)]));
      const loaded = loadSettings(settings);
      expect(loaded.queue).toEqual({
        maxDeliveryCount: queueFile.queues.orders.maxDeliveryCount,
        lockDurationSeconds: queueFile.queues.orders.lockDurationSeconds,
        lockRenewalMaxSeconds: queueFile.operations.lockRenewalMaxSeconds,
        messageTimeToLiveSeconds: queueFile.queues.orders.defaultMessageTimeToLiveSeconds,
        resubmitHorizonSeconds: queueFile.operations.deadLetterResubmitHorizonSeconds,
      });
      expect(loaded.markerTtlSeconds).toBe(queueFile.operations.inboxMarkerTtlSeconds);
      expect(loaded.retry.budgetMs).toBe(queueFile.operations.transientRetryBudgetSeconds * 1000);
    });

    it('sets a marker retention that covers the queue it is deployed with', () => {
      const queue = props(one('Microsoft.ServiceBus/namespaces/queues'));
      const settings = appSettings();
      const check = checkMarkerRetention({
        markerTtlSeconds: Number(settings.INBOX_MARKER_TTL_SECONDS),
        maxDeliveryCount: Number(queue.maxDeliveryCount),
        lockDurationSeconds: isoSeconds(queue.lockDuration),
        lockRenewalMaxSeconds: hostLockRenewalSeconds(),
        messageTimeToLiveSeconds: isoSeconds(queue.defaultMessageTimeToLive),
        retryBudgetSeconds: Number(settings.TRANSIENT_RETRY_BUDGET_SECONDS),
        resubmitHorizonSeconds: Number(settings.DLQ_RESUBMIT_HORIZON_SECONDS),
      });
      expect(check).toEqual({ ok: true, requiredSeconds: 10 * (300 + 60) + 1_209_600 + 86_400 + 1_209_600 });
      expect(Number(settings.QUEUE_LOCK_DURATION_SECONDS)).toBe(isoSeconds(queue.lockDuration));
      // The app checks retention against the renewal period it is told; host.json is what the host really renews for.
      expect(Number(settings.LOCK_RENEWAL_MAX_SECONDS)).toBe(hostLockRenewalSeconds());
    });
  });

  describe('shipments and the carrier key', () => {
    const settingsOf = (d: Deployment) =>
      Object.fromEntries(
        (
          d.resources.find((r) => r.type === 'Microsoft.Web/sites')?.body.properties as { siteConfig: { appSettings: { name: string; value: unknown }[] } }
        ).siteConfig.appSettings.map((s) => [s.name, s.value]),
      );

    it('keeps the key in a vault with RBAC authorization, soft delete and purge protection, and resolves it with the app identity', () => {
      const vault = one('Microsoft.KeyVault/vaults');
      expect(props(vault)).toMatchObject({
        enableRbacAuthorization: true,
        enableSoftDelete: true,
        enablePurgeProtection: true,
        softDeleteRetentionInDays: 90,
        sku: { family: 'A', name: 'standard' },
      });
      expect(props(vault)).not.toHaveProperty('accessPolicies');
      expect(props(one('Microsoft.Web/sites')).keyVaultReferenceIdentity).toEqual(expect.stringContaining('userAssignedIdentities'));
      // No carrier key given: no carrier secret in the template; the operator sets it. The retry state key is always written.
      expect(of('Microsoft.KeyVault/vaults/secrets').map((r) => r.name)).toEqual([
        expect.stringMatching(/\/retry-state-signing-key$/),
        expect.stringMatching(/\/retry-state-signing-key-previous$/),
      ]);
      const withKey = expandDeployment(JSON.parse(compiled), { ...required, principalId: userObjectId, carrierApiKey: 'k-123' });
      const secret = withKey.resources.find((r) => r.type === 'Microsoft.KeyVault/vaults/secrets' && r.name.endsWith('/carrier-api-key'));
      expect(secret?.name).toMatch(/\/carrier-api-key$/);
      expect((secret?.body.properties as { value: unknown }).value).toBe('k-123');
    });

    it("writes the retry state signing key it is given, with no default: each provision keeps the environment's key instead of drawing a new one", () => {
      const parameter = (JSON.parse(compiled) as { parameters: Record<string, Record<string, unknown>> }).parameters.retryStateSigningKey;
      expect(parameter).toEqual({
        type: 'securestring',
        minLength: 32,
        metadata: expect.objectContaining({ description: expect.stringContaining('preprovision') }),
      });
      const secret = (d: Deployment, name: string) =>
        (d.resources.find((r) => r.type === 'Microsoft.KeyVault/vaults/secrets' && r.name.endsWith(`/${name}`))?.body.properties as { value: unknown }).value;
      expect(secret(deployment, 'retry-state-signing-key')).toBe(retryStateSigningKey);
      expect(compiled).not.toMatch(/newGuid/);
    });

    it('holds the key before a rotation in retry-state-signing-key-previous (the current key when none is given), read by the app as RETRY_STATE_SIGNING_KEY_PREVIOUS', () => {
      const secret = (d: Deployment, name: string) =>
        (d.resources.find((r) => r.type === 'Microsoft.KeyVault/vaults/secrets' && r.name.endsWith(`/${name}`))?.body.properties as { value: unknown }).value;
      expect(secret(deployment, 'retry-state-signing-key-previous')).toBe(retryStateSigningKey);
      const rotating = expandDeployment(JSON.parse(compiled), {
        ...required,
        principalId: userObjectId,
        retryStateSigningKey: 'n'.repeat(64),
        retryStateSigningKeyPrevious: retryStateSigningKey,
      });
      expect([secret(rotating, 'retry-state-signing-key'), secret(rotating, 'retry-state-signing-key-previous')]).toEqual([
        'n'.repeat(64),
        retryStateSigningKey,
      ]);
      expect(settingsOf(deployment).RETRY_STATE_SIGNING_KEY_PREVIOUS).toMatch(
        /^@Microsoft\.KeyVault\(VaultName=kv-[a-z0-9]+;SecretName=retry-state-signing-key-previous\)$/,
      );
      const resolved = Object.fromEntries(
        Object.entries(settingsOf(deployment)).map(([k, v]) => [k, isRuntime(v) ? 'https://cosmos.example.documents.azure.com:443/' : String(v)]),
      );
      const settings = loadSettings({ ...resolved, RETRY_STATE_SIGNING_KEY: 'n'.repeat(64), RETRY_STATE_SIGNING_KEY_PREVIOUS: retryStateSigningKey });
      expect(settings.retry).toMatchObject({ stateSigningKey: 'n'.repeat(64), previousStateSigningKey: retryStateSigningKey });
    });

    it('without a carrier URL, deploys the shipment functions disabled, so their events wait on the subscription', () => {
      expect(settingsOf(deployment)).toMatchObject({
        'AzureWebJobs.requestShipment.Disabled': 'true',
        'AzureWebJobs.reconcileShipments.Disabled': 'true',
        FULFILMENT_SUBSCRIPTION_NAME: 'fulfilment',
      });
      expect(settingsOf(deployment)).not.toHaveProperty('CARRIER_API_URL');
    });

    it("without a carrier URL, sets no Key Vault reference but the retry state key's (a secret always written, its role always granted): one the platform cannot resolve stays literal and would stop the app at start-up", () => {
      // The platform leaves an unresolvable reference as its literal text (no secret yet, or no role on it).
      const settings = Object.fromEntries(
        Object.entries(settingsOf(deployment)).map(([k, v]) => [k, isRuntime(v) ? 'https://cosmos.example.documents.azure.com:443/' : String(v)]),
      );
      expect(
        Object.entries(settings)
          .filter(([, v]) => v.startsWith('@Microsoft.KeyVault('))
          .map(([k]) => k),
      ).toEqual(['RETRY_STATE_SIGNING_KEY', 'RETRY_STATE_SIGNING_KEY_PREVIOUS']);
      expect(() =>
        loadSettings({
          ...settings,
          RETRY_STATE_SIGNING_KEY: 'resolved-secret-of-at-least-32-characters',
          RETRY_STATE_SIGNING_KEY_PREVIOUS: 'resolved-secret-of-at-least-32-characters',
        }),
      ).not.toThrow();
    });

    it('with a carrier URL, enables them with the URL, the reconciler schedule and the key reference', () => {
      const withCarrier = settingsOf(
        expandDeployment(JSON.parse(compiled), { ...required, principalId: userObjectId, carrierApiUrl: 'https://api.carrier.example/v1/' }),
      );
      expect(withCarrier).toMatchObject({
        CARRIER_API_URL: 'https://api.carrier.example/v1/',
        CARRIER_API_KEY: expect.stringMatching(/^@Microsoft\.KeyVault\(/),
      });
      expect(Object.keys(withCarrier).filter((k) => k.endsWith('.Disabled'))).toEqual([]);
      expect(
        parseNcrontab(String(withCarrier.SHIPMENT_RECONCILE_SCHEDULE), 'reconcileShipments').nextRun(new Date('2026-12-01T10:01:00Z'))?.toISOString(),
      ).toBe('2026-12-01T10:02:45.000Z');
    });
  });

  describe('secrets', () => {
    it('reads no key, connection string or secret anywhere in the template', () => {
      expect(compiled).not.toMatch(/list(Keys|ConnectionStrings|Secrets|AccountSas|ServiceSas)\(/i);
      expect(compiled).not.toMatch(/AccountKey=|SharedAccessKey|primaryMasterKey|primaryKey/i);
    });

    it("puts none in app settings: the only connection string is Application Insights', which holds no secret, and the carrier key is a Key Vault reference", () => {
      const withCarrier = expandDeployment(JSON.parse(compiled), { ...required, principalId: userObjectId, carrierApiUrl: 'https://api.carrier.example/v1/' });
      const site = withCarrier.resources.find((r) => r.type === 'Microsoft.Web/sites')!;
      const settings = (props(site).siteConfig as { appSettings: { name: string; value: unknown }[] }).appSettings ?? [];
      const names = settings.map((s) => s.name);
      expect(names.filter((n) => /KEY|SECRET|PASSWORD|CONNECTION_?STRING/i.test(n)).sort()).toEqual([
        'APPLICATIONINSIGHTS_CONNECTION_STRING',
        'CARRIER_API_KEY',
        'RETRY_STATE_SIGNING_KEY',
        'RETRY_STATE_SIGNING_KEY_PREVIOUS',
      ]);
      expect(settings.find((s) => s.name === 'RETRY_STATE_SIGNING_KEY')?.value).toMatch(
        /^@Microsoft\.KeyVault\(VaultName=kv-[a-z0-9]+;SecretName=retry-state-signing-key\)$/,
      );
      expect(settings.find((s) => s.name === 'CARRIER_API_KEY')?.value).toMatch(/^@Microsoft\.KeyVault\(VaultName=kv-[a-z0-9]+;SecretName=carrier-api-key\)$/);
      expect(names).not.toContain('ServiceBusConnection');
    });

    it('outputs none', () => {
      // A vault's name (azd's AZURE_KEY_VAULT_NAME) is no secret.
      expect(Object.keys(deployment.outputs).filter((n) => /KEY(?!_?VAULT)|SECRET|PASSWORD|CONNECTION/i.test(n))).toEqual([]);
      expect(deployment.outputs.AZURE_KEY_VAULT_NAME).toMatch(/^kv-[a-z0-9]{13}$/);
    });
  });

  describe('role assignments (least privilege)', () => {
    const roleName: Record<string, string> = {
      '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0': 'Service Bus Data Receiver',
      '090c5cfd-751d-490a-894a-3ce6f1109419': 'Service Bus Data Owner',
      '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39': 'Service Bus Data Sender',
      'b7e6dc6d-f1e8-4753-8033-0f276bb0955b': 'Storage Blob Data Owner',
      '4633458b-17de-408a-b874-0445c86b69e6': 'Key Vault Secrets User',
      'b86a8fe4-44ce-4948-aee5-eccb2c155cd7': 'Key Vault Secrets Officer',
      '3913510d-42f4-4e42-8a64-420c390055eb': 'Monitoring Metrics Publisher',
      '00000000-0000-0000-0000-000000000002': 'Cosmos DB Built-in Data Contributor',
    };
    const grantsIn = (d: Deployment) => {
      const live = (type: string) => d.resources.filter((r) => r.type === type && !r.existing);
      return [
        ...live('Microsoft.Authorization/roleAssignments').map((r) => {
          const p = props(r);
          return {
            to: who(p.principalId),
            role: roleName[String(p.roleDefinitionId).split('/').pop() ?? ''] ?? String(p.roleDefinitionId),
            scope: shortScope(r.scope),
            type: p.principalType,
          };
        }),
        ...live('Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments').map((r) => {
          const p = props(r);
          return {
            to: who(p.principalId),
            role: roleName[String(p.roleDefinitionId).split('/').pop() ?? ''] ?? String(p.roleDefinitionId),
            scope: shortScope(p.scope),
            type: undefined,
          };
        }),
      ].sort((a, b) => `${a.to}${a.role}${a.scope}`.localeCompare(`${b.to}${b.role}${b.scope}`));
    };
    const grants = (d: Deployment) => grantsIn(d).map(({ to, role, scope }) => ({ to, role, scope }));
    const who = (principal: unknown) =>
      principal === userObjectId
        ? 'deployer'
        : principal === operatorsObjectId
          ? 'operators'
          : isRuntime(principal) && /userAssignedIdentities|appIdentity/.test(String(principal))
            ? 'app'
            : String(principal);
    const shortScope = (scope: unknown) => {
      const s = String(scope);
      const scopes: [RegExp, string][] = [
        [/\/queues\/orders$/, 'orders queue'],
        [/\/dbs\/orders\/colls\/orders$/, 'orders container'],
        [/\/dbs\/orders\/colls\/leases$/, 'leases container'],
        [/\/topics\/order-events\/subscriptions\/fulfilment$/, 'fulfilment subscription'],
        [/\/topics\/order-events\/subscriptions\/audit$/, 'audit subscription'],
        [/\/topics\/order-events$/, 'order-events topic'],
        [/Microsoft\.KeyVault\/vaults\/[^/]+\/secrets\/carrier-api-key$/, 'carrier key secret'],
        [/Microsoft\.KeyVault\/vaults\/[^/]+\/secrets\/retry-state-signing-key$/, 'retry state key secret'],
        [/Microsoft\.KeyVault\/vaults\/[^/]+\/secrets\/retry-state-signing-key-previous$/, 'previous retry state key secret'],
        [/blobServices\/default\/containers\/([a-z-]+)$/, '$1 container'],
        [/Microsoft\.Insights\/components\/[^/]+$/, 'Application Insights'],
      ];
      for (const [pattern, name] of scopes) if (pattern.test(s)) return s.replace(/^.*$/, (whole) => whole.replace(new RegExp(`^.*?${pattern.source}`), name));
      return s;
    };
    const appGrants = [
      { to: 'app', role: 'Cosmos DB Built-in Data Contributor', scope: 'leases container' },
      { to: 'app', role: 'Cosmos DB Built-in Data Contributor', scope: 'orders container' },
      { to: 'app', role: 'Key Vault Secrets User', scope: 'previous retry state key secret' },
      { to: 'app', role: 'Key Vault Secrets User', scope: 'retry state key secret' },
      { to: 'app', role: 'Monitoring Metrics Publisher', scope: 'Application Insights' },
      { to: 'app', role: 'Service Bus Data Receiver', scope: 'fulfilment subscription' },
      { to: 'app', role: 'Service Bus Data Receiver', scope: 'orders queue' },
      { to: 'app', role: 'Service Bus Data Sender', scope: 'order-events topic' },
      { to: 'app', role: 'Service Bus Data Sender', scope: 'orders queue' },
      { to: 'app', role: 'Storage Blob Data Owner', scope: 'app-package container' },
      { to: 'app', role: 'Storage Blob Data Owner', scope: 'azure-webjobs-hosts container' },
      { to: 'app', role: 'Storage Blob Data Owner', scope: 'azure-webjobs-secrets container' },
    ];
    // What the runbook (docs/operations.md) does: the dead-letter tool on the queue and on each
    // subscription (receive; resubmit = send to the queue, or through the topic), and the store's
    // records it lists and changes (parked items, outbox entries, shipments).
    const runbookGrants = (to: string) => [
      { to, role: 'Cosmos DB Built-in Data Contributor', scope: 'orders container' },
      { to, role: 'Service Bus Data Receiver', scope: 'audit subscription' },
      { to, role: 'Service Bus Data Receiver', scope: 'fulfilment subscription' },
      { to, role: 'Service Bus Data Receiver', scope: 'orders queue' },
      { to, role: 'Service Bus Data Sender', scope: 'order-events topic' },
      { to, role: 'Service Bus Data Sender', scope: 'orders queue' },
    ];
    const deploy = (parameters: Record<string, unknown>) => expandDeployment(JSON.parse(compiled), { ...required, ...parameters });

    it('grants the app exactly these data roles, each on one entity, container or secret, none on a whole namespace, account or vault', () => {
      expect(grants(deploy({}))).toEqual(appGrants);
      // With a carrier, the platform resolves the key's reference with the app's identity: that one secret.
      expect(grants(deploy({ carrierApiUrl: 'https://api.carrier.example/v1/' }))).toEqual(
        [...appGrants, { to: 'app', role: 'Key Vault Secrets User', scope: 'carrier key secret' }].sort((a, b) =>
          `${a.to}${a.role}${a.scope}`.localeCompare(`${b.to}${b.role}${b.scope}`),
        ),
      );
    });

    it('gives the app no Service Bus Data Owner: no control-plane writes, no Manage claim (it can neither delete nor recreate its queue)', () => {
      const roles = grants(deploy({ principalId: userObjectId, operatorPrincipalId: operatorsObjectId, carrierApiUrl: 'https://api.carrier.example/v1/' })).map(
        (g) => g.role,
      );
      expect(roles).not.toContain('Service Bus Data Owner');
      // Delayed retries go back to the queue, and the intake's OrderPlaced through the outbox: Send on the queue.
      expect(
        grants(deploy({}))
          .filter((g) => g.scope === 'orders queue')
          .map((g) => g.role),
      ).toEqual(['Service Bus Data Receiver', 'Service Bus Data Sender']);
    });

    it("gives the operators what the runbook needs, on every entity, in every environment, as a group by default; the carrier key's secret to rotate it", () => {
      const withOperators = deploy({ operatorPrincipalId: operatorsObjectId, grantDeployerDataAccess: false });
      expect(grants(withOperators).filter((g) => g.to === 'operators')).toEqual(runbookGrants('operators'));
      expect(
        new Set(
          grantsIn(withOperators)
            .filter((g) => g.to === 'operators' && g.type !== undefined)
            .map((g) => g.type),
        ),
      ).toEqual(new Set(['Group']));
      const withCarrier = deploy({ operatorPrincipalId: operatorsObjectId, carrierApiUrl: 'https://api.carrier.example/v1/' });
      expect(grants(withCarrier).filter((g) => g.to === 'operators' && g.scope === 'carrier key secret')).toEqual([
        { to: 'operators', role: 'Key Vault Secrets Officer', scope: 'carrier key secret' },
      ]);
    });

    it('gives the deploying principal the same data access only with grantDeployerDataAccess, and never a Key Vault role', () => {
      const granted = deploy({ principalId: userObjectId, carrierApiUrl: 'https://api.carrier.example/v1/' });
      expect(grants(granted).filter((g) => g.to === 'deployer')).toEqual(runbookGrants('deployer'));
      expect(grants(deploy({ principalId: userObjectId, grantDeployerDataAccess: false })).filter((g) => g.to === 'deployer')).toEqual([]);
    });

    it('grants a principal that is both deployer and operator once', () => {
      const both = deploy({ principalId: operatorsObjectId, operatorPrincipalId: operatorsObjectId, operatorPrincipalType: 'User' });
      const names = both.resources.filter((r) => r.type.endsWith('roleAssignments')).map((r) => r.name);
      expect(new Set(names).size).toBe(names.length);
      expect(grants(both).filter((g) => g.to === 'operators')).toEqual(runbookGrants('operators'));
    });

    it('uses the built-in role definitions by their fixed ids', () => {
      for (const r of deploy({ principalId: userObjectId, operatorPrincipalId: operatorsObjectId }).resources.filter(
        (x) => x.type === 'Microsoft.Authorization/roleAssignments' && !x.existing,
      )) {
        expect(String(props(r).roleDefinitionId)).toMatch(
          new RegExp(`^/subscriptions/${testSubscriptionId}/providers/Microsoft.Authorization/roleDefinitions/[0-9a-f-]{36}$`),
        );
      }
    });

    it("gives the deploying principal the type azd reports, so a pipeline's service principal can deploy", () => {
      const parameters = JSON.parse(readFileSync('infra/main.parameters.json', 'utf8')) as { parameters: Record<string, { value: string }> };
      expect(parameters.parameters.principalType?.value).toBe('${AZURE_PRINCIPAL_TYPE=User}');
      const asPipeline = grantsIn(deploy({ principalId: userObjectId, principalType: 'ServicePrincipal' })).filter(
        (g) => g.to === 'deployer' && g.type !== undefined,
      );
      expect(asPipeline.length).toBe(5);
      expect(new Set(asPipeline.map((g) => g.type))).toEqual(new Set(['ServicePrincipal']));
      expect(
        new Set(
          grantsIn(deploy({ principalId: userObjectId }))
            .filter((g) => g.to === 'deployer' && g.type !== undefined)
            .map((g) => g.type),
        ),
      ).toEqual(new Set(['User']));
    });

    it('grants no one but the app anything when no principal id is given', () => {
      expect(grants(deploy({ principalId: '' })).filter((g) => g.to !== 'app')).toEqual([]);
    });
  });

  it('offers only regions with Flex Consumption, as an azd location', () => {
    const location = (JSON.parse(compiled) as { parameters: Record<string, { allowedValues?: string[]; metadata?: { azd?: { type?: string } } }> }).parameters
      .location;
    expect(location?.metadata?.azd?.type).toBe('location');
    expect(location?.allowedValues).toEqual(expect.arrayContaining(['westeurope', 'eastus', 'swedencentral', 'australiaeast']));
    expect(location?.allowedValues).not.toContain('eastus2euap');
    expect(location?.allowedValues?.length).toBe(31);
  });

  it('turns basic (password) publishing off for FTP and SCM', () => {
    const policies = of('Microsoft.Web/sites/basicPublishingCredentialsPolicies');
    expect(policies.map((p) => [p.name.split('/').pop(), props(p).allow]).sort()).toEqual([
      ['ftp', false],
      ['scm', false],
    ]);
  });

  it('outputs what the azd environment and the postprovision hook need', () => {
    expect(Object.keys(deployment.outputs)).toEqual(
      expect.arrayContaining([
        'AZURE_LOCATION',
        'AZURE_RESOURCE_GROUP',
        'SERVICEBUS_FULLY_QUALIFIED_NAMESPACE',
        'ORDERS_QUEUE_NAME',
        'COSMOS_ENDPOINT',
        'COSMOS_LEASES_CONTAINER',
        'ORDER_EVENTS_TOPIC_NAME',
        'INBOX_MARKER_TTL_SECONDS',
        'LOCK_RENEWAL_MAX_SECONDS',
      ]),
    );
    expect(deployment.outputs.AZURE_RESOURCE_GROUP).toBe('rg-ci');
    expect(deployment.outputs.INBOX_MARKER_TTL_SECONDS).toBe(queueFile.operations.inboxMarkerTtlSeconds);
  });

  describe('alerts, the action group and the workbook', () => {
    const logAlerts = () => of('Microsoft.Insights/scheduledQueryRules');
    const criterion = (r: DeployedResource) =>
      (props(r).criteria as { allOf: { query: string; threshold: number; operator: string; metricMeasureColumn: string }[] }).allOf[0]!;
    const alertNamed = (name: string) => {
      const found = logAlerts().find((r) => r.name === `alert-orders-${name}`);
      expect(found, name).toBeDefined();
      return found!;
    };

    it('raises one log alert per fault, on Application Insights, every 5 minutes, to the operators action group', () => {
      expect(
        logAlerts()
          .map((r) => r.name)
          .sort(),
      ).toEqual(
        ['conflict-or-invalid', 'duplicate-ratio', 'outbox-failed', 'outbox-lag', 'parked-item-rejected', 'parked-items-old', 'shipment-escalated'].map(
          (n) => `alert-orders-${n}`,
        ),
      );
      const group = one('Microsoft.Insights/actionGroups');
      for (const alert of logAlerts()) {
        expect(props(alert)).toMatchObject({ enabled: true, evaluationFrequency: 'PT5M', autoMitigate: true });
        expect(String((props(alert).scopes as string[])[0])).toContain('Microsoft.Insights/components/');
        expect(JSON.stringify(props(alert).actions)).toContain(String(group.name));
        expect(criterion(alert).operator).toBe('GreaterThan');
      }
    });

    it('fires on any conflict or invalid message in 5 minutes, from the outcome counter', () => {
      const alert = alertNamed('conflict-or-invalid');
      expect(props(alert)).toMatchObject({ windowSize: 'PT5M', severity: 1 });
      expect(criterion(alert)).toMatchObject({ threshold: 0, metricMeasureColumn: 'total' });
      expect(criterion(alert).query).toMatch(/name == "orders\.messages".*outcome in \("conflict", "invalid"\)/);
    });

    it("fires on a duplicate ratio above the parameter, on the outbox lag above OUTBOX_LAG_ALERT_SECONDS (the app's setting too), on old parked items and on escalations", () => {
      expect(criterion(alertNamed('duplicate-ratio'))).toMatchObject({ threshold: 20, metricMeasureColumn: 'percent' });
      expect(criterion(alertNamed('duplicate-ratio')).query).toContain('sumif(value, outcome == "duplicate")');
      expect(criterion(alertNamed('outbox-lag'))).toMatchObject({ threshold: 300, query: expect.stringContaining('name == "outbox.lag"') });
      const site = one('Microsoft.Web/sites');
      const appSettings = (props(site).siteConfig as { appSettings: { name: string; value: string }[] }).appSettings;
      expect(appSettings.find((s) => s.name === 'OUTBOX_LAG_ALERT_SECONDS')?.value).toBe('300');
      expect(criterion(alertNamed('parked-items-old'))).toMatchObject({ threshold: 3600, query: expect.stringContaining('orders.parked_items.oldest_age') });
      expect(criterion(alertNamed('shipment-escalated'))).toMatchObject({ threshold: 0, query: expect.stringContaining('shipments.escalations') });
    });

    it('alerts on failed outbox entries and rejected parked items, on the counters the app emits, as the docs promise', () => {
      // outbox.events{outcome} (src/telemetry/outboxTelemetry.ts) and orders.parked_items{event} (src/telemetry/parkedItemTelemetry.ts).
      const outboxFailed = alertNamed('outbox-failed');
      expect(props(outboxFailed)).toMatchObject({ windowSize: 'PT5M', severity: 2 });
      expect(criterion(outboxFailed)).toMatchObject({ threshold: 0, metricMeasureColumn: 'total' });
      expect(criterion(outboxFailed).query).toMatch(/name == "outbox\.events".*outcome == "failed".*sum\(value\)/);
      expect(String(props(outboxFailed).description)).toContain('docs/operations.md#a-failed-outbox-entry');
      const parkedRejected = alertNamed('parked-item-rejected');
      expect(props(parkedRejected)).toMatchObject({ windowSize: 'PT5M', severity: 2 });
      expect(criterion(parkedRejected)).toMatchObject({ threshold: 0, metricMeasureColumn: 'total' });
      expect(criterion(parkedRejected).query).toMatch(/name == "orders\.parked_items".*event == "rejected".*sum\(value\)/);
      expect(String(props(parkedRejected).description)).toContain('docs/operations.md#a-rejected-parked-item');
    });

    it('fires on any dead-lettered message on any queue or subscription of the namespace', () => {
      const alert = one('Microsoft.Insights/metricAlerts');
      expect(String((props(alert).scopes as string[])[0])).toContain('Microsoft.ServiceBus/namespaces/');
      expect((props(alert).criteria as { allOf: unknown[] }).allOf).toEqual([
        expect.objectContaining({
          metricName: 'DeadletteredMessages',
          operator: 'GreaterThan',
          threshold: 0,
          dimensions: [{ name: 'EntityName', operator: 'Include', values: ['*'] }],
        }),
      ]);
    });

    it('e-mails the operators only when an address is given', () => {
      expect(props(one('Microsoft.Insights/actionGroups')).emailReceivers).toEqual([]);
      const withEmail = expandDeployment(JSON.parse(compiled), { ...required, principalId: userObjectId, alertEmail: 'ops@example.com' });
      const group = withEmail.resources.find((r) => r.type === 'Microsoft.Insights/actionGroups');
      expect((group?.body.properties as { emailReceivers: unknown[] }).emailReceivers).toEqual([
        { name: 'operator', emailAddress: 'ops@example.com', useCommonAlertSchema: true },
      ]);
    });

    it('ships a workbook on Application Insights: outcome rates, the duplicate ratio, dead-letter depth, outbox lag', () => {
      const workbook = one('Microsoft.Insights/workbooks');
      const data = JSON.parse(String(props(workbook).serializedData)) as {
        items: { name: string; content: { query?: string; metrics?: { metric: string }[] } }[];
      };
      expect(data.items.map((i) => i.name)).toEqual(['title', 'outcomes', 'duplicate-ratio', 'dead-letter-depth', 'outbox-lag']);
      expect(data.items.find((i) => i.name === 'dead-letter-depth')?.content.metrics?.[0]?.metric).toContain('DeadletteredMessages');
      for (const item of data.items.filter((i) => i.content.query)) expect(item.content.query).toMatch(/^customMetrics \| where name/);
    });
  });

  describe("the intake's callers (intakeAuthEnabled)", () => {
    const intakeAppId = '0d3c7f4e-5b6a-4c2d-8e9f-a1b2c3d4e5f6';
    const withAuth = () =>
      expandDeployment(JSON.parse(compiled), { ...required, principalId: userObjectId, intakeAuthEnabled: true, intakeAuthClientId: intakeAppId });
    const settingsOf = (d: Deployment) =>
      Object.fromEntries(
        (
          d.resources.find((r) => r.type === 'Microsoft.Web/sites')?.body.properties as { siteConfig: { appSettings: { name: string; value: unknown }[] } }
        ).siteConfig.appSettings.map((s) => [s.name, s.value]),
      );
    const authSettings = (d: Deployment) => d.resources.filter((r) => r.type === 'Microsoft.Web/sites/config' && r.name.endsWith('/authsettingsV2'));

    it('off by default: no App Service authentication, and the app keeps one shared key scope (it trusts no x-ms-client-principal)', () => {
      expect(authSettings(deployment)).toEqual([]);
      expect(settingsOf(deployment).INTAKE_CALLER_IDENTITY).toBe('shared');
    });

    it('on: Entra ID authentication on the function app refuses unauthenticated requests with 401, and the app scopes keys by principal', () => {
      const d = withAuth();
      const [auth, ...more] = authSettings(d);
      expect(more).toEqual([]);
      expect(auth?.name.split('/')[0]).toBe(d.resources.find((r) => r.type === 'Microsoft.Web/sites')?.name);
      expect(auth?.body.properties).toEqual({
        platform: { enabled: true },
        globalValidation: { requireAuthentication: true, unauthenticatedClientAction: 'Return401' },
        httpSettings: { requireHttps: true },
        identityProviders: {
          azureActiveDirectory: {
            enabled: true,
            registration: { clientId: intakeAppId, openIdIssuer: `https://login.microsoftonline.com/${testTenantId}/v2.0` },
            validation: { allowedAudiences: [intakeAppId, `api://${intakeAppId}`] },
          },
        },
        login: { tokenStore: { enabled: false } },
      });
      expect(settingsOf(d).INTAKE_CALLER_IDENTITY).toBe('entra');
    });

    it("on: the deployed settings pass the app's start-up validation with INTAKE_CALLER_IDENTITY=entra", () => {
      const settings = Object.fromEntries(
        Object.entries(settingsOf(withAuth())).map(([k, v]) => [k, isRuntime(v) ? 'https://cosmos.example.documents.azure.com:443/' : String(v)]),
      );
      // The platform resolves the retry state key's Key Vault reference before the app reads it.
      const resolvedKey = 'resolved-secret-of-at-least-32-characters';
      expect(loadSettings({ ...settings, RETRY_STATE_SIGNING_KEY: resolvedKey, RETRY_STATE_SIGNING_KEY_PREVIOUS: resolvedKey }).intake.callerIdentity).toBe(
        'entra',
      );
    });
  });

  it("outputs the HTTP intake's URL: the app's host name, the host's api prefix and submitOrder's route", () => {
    expect(String(deployment.outputs.ORDER_INTAKE_URL)).toMatch(/^https:\/\/.+\/api\/orders$/);
    const hostJson = JSON.parse(readFileSync('host.json', 'utf8')) as { extensions?: { http?: { routePrefix?: string } } };
    expect(hostJson.extensions?.http?.routePrefix).toBeUndefined(); // the default, api
  });
});
