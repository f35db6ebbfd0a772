import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { timeSpanToMs } from '../../emulators/functions-host/hostSettings.js';
import { parseNcrontab } from '../../emulators/functions-host/timerTriggers.js';
import { localSettingsFromAzd, writeLocalSettings } from '../../infra/hooks/writeLocalSettings.cjs';
import { loadSettings, settingDefaults } from '../../src/config.js';
import { azureYamlSchema, hostJsonSchema, localSettingsSchema } from '../support/configurationSchemas.js';
import { documentedSettings } from '../support/documentedSettings.js';

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as unknown;
const problems = (result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  result.error?.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`) ?? [];

describe('configuration files: the fields this project relies on', () => {
  it('azure.yaml declares the function service in TypeScript and a postprovision hook that needs only node', () => {
    const config = azureYamlSchema.safeParse(parseYaml(readFileSync('azure.yaml', 'utf8')));
    expect(problems(config)).toEqual([]);
    for (const hook of Object.values(config.data?.hooks.postprovision ?? {})) expect(hook.run).toBe('node infra/hooks/writeLocalSettings.cjs');
  });

  it('azure.yaml runs the retry state signing key hook before every provision, with node alone, on every platform, stopping the provision when it fails', () => {
    const config = azureYamlSchema.safeParse(parseYaml(readFileSync('azure.yaml', 'utf8')));
    expect(problems(config)).toEqual([]);
    const hooks = config.data?.hooks.preprovision;
    expect(hooks && Object.keys(hooks).sort()).toEqual(['posix', 'windows']);
    for (const hook of Object.values(hooks ?? {}))
      expect(hook).toMatchObject({ run: 'node infra/hooks/ensureRetryStateSigningKey.cjs', interactive: false, continueOnError: false });
  });

  it('host.json: OpenTelemetry mode with no Application Insights section it would ignore, auto-complete on, a lock renewal period', () => {
    expect(problems(hostJsonSchema.safeParse(json('host.json')))).toEqual([]);
  });

  it('the host.json check can fail: samplingSettings beside telemetryMode OpenTelemetry, auto-complete off and a bad TimeSpan are named', () => {
    const host = json('host.json') as { extensions: { serviceBus: Record<string, unknown> }; logging?: unknown };
    host.extensions.serviceBus.autoCompleteMessages = false;
    host.extensions.serviceBus.maxAutoLockRenewalDuration = '5 minutes';
    host.logging = { applicationInsights: { samplingSettings: { isEnabled: true, excludedTypes: 'Request;Exception' } } };
    expect(problems(hostJsonSchema.safeParse(host))).toEqual([
      expect.stringMatching(/^logging\.applicationInsights: is not read with telemetryMode OpenTelemetry/),
      expect.stringMatching(/^extensions\.serviceBus\.maxAutoLockRenewalDuration: a TimeSpan/),
      expect.stringMatching(/^extensions\.serviceBus\.autoCompleteMessages: /),
    ]);
  });

  it('host.json renews locks for as long as the app assumes in its retention check', () => {
    const renewal = (json('host.json') as { extensions: { serviceBus: { maxAutoLockRenewalDuration: string } } }).extensions.serviceBus
      .maxAutoLockRenewalDuration;
    expect(timeSpanToMs(renewal) / 1000).toBe(settingDefaults.LOCK_RENEWAL_MAX_SECONDS);
    const queueFile = json('infra/servicebus-queues.json') as { operations: { lockRenewalMaxSeconds: number } };
    expect(queueFile.operations.lockRenewalMaxSeconds).toBe(settingDefaults.LOCK_RENEWAL_MAX_SECONDS);
  });

  it('local.settings.sample.json: IsEncrypted a boolean, string values, what Core Tools needs, accepted by the app', () => {
    const sample = localSettingsSchema.safeParse(json('local.settings.sample.json'));
    expect(problems(sample)).toEqual([]);
    expect(() => loadSettings(sample.data?.Values)).not.toThrow();
  });

  it('the local.settings check can fail: IsEncrypted as a string and a missing worker runtime are named', () => {
    const result = localSettingsSchema.safeParse({ IsEncrypted: 'false', Values: { AzureWebJobsStorage: 'x' } });
    expect(problems(result)).toEqual([expect.stringMatching(/^IsEncrypted: /), 'Values: FUNCTIONS_WORKER_RUNTIME must be "node"']);
  });

  it('local.settings.sample.json and the settings reference list the same settings', () => {
    const sample = Object.keys((json('local.settings.sample.json') as { Values: object }).Values);
    const documented = documentedSettings();
    expect(documented.length).toBeGreaterThan(15);
    // COSMOS_CA_CERT_PATH names a file on the developer's machine: no sample value makes sense.
    expect(documented.filter((n) => !sample.includes(n) && n !== 'COSMOS_CA_CERT_PATH')).toEqual([]);
    expect(sample.filter((n) => !documented.includes(n))).toEqual([]);
  });
});

describe('the postprovision hook (infra/hooks/writeLocalSettings.cjs)', () => {
  const env = {
    AZURE_LOCATION: 'westeurope',
    SERVICEBUS_FULLY_QUALIFIED_NAMESPACE: 'sb-x.servicebus.windows.net',
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: 'https://cosmos-x.documents.azure.com:443/',
    COSMOS_DATABASE: 'orders',
    COSMOS_ORDERS_CONTAINER: 'orders',
    QUEUE_MAX_DELIVERY_COUNT: '10',
    QUEUE_LOCK_DURATION_SECONDS: '60',
    QUEUE_MESSAGE_TTL_SECONDS: '1209600',
    LOCK_RENEWAL_MAX_SECONDS: '300',
    DLQ_RESUBMIT_HORIZON_SECONDS: '1209600',
    INBOX_MARKER_TTL_SECONDS: '2592000',
  };

  it('writes a local.settings.json with identity-based connections and no key, which the app accepts', () => {
    const settings = localSettingsFromAzd(env);
    expect(problems(localSettingsSchema.safeParse(settings))).toEqual([]);
    expect(settings.Values).toMatchObject({
      ServiceBusConnection__fullyQualifiedNamespace: 'sb-x.servicebus.windows.net',
      INBOX_MARKER_TTL_SECONDS: '2592000',
      LOCK_RENEWAL_MAX_SECONDS: '300',
    });
    expect(Object.keys(settings.Values).filter((k) => /KEY|SECRET/.test(k))).toEqual([]);
    expect(() => loadSettings(settings.Values)).not.toThrow();
    // The timer binding resolves %PARKED_SWEEP_SCHEDULE%: without it Core Tools would not start.
    expect(parseNcrontab(String(settings.Values.PARKED_SWEEP_SCHEDULE), 'sweepParkedItems').nextRun(new Date('2026-12-01T10:01:00Z'))?.toISOString()).toBe(
      '2026-12-01T10:05:00.000Z',
    );
  });

  it('names what is missing when the environment was never provisioned', () => {
    expect(() => localSettingsFromAzd({ AZURE_LOCATION: 'westeurope' })).toThrow(
      /lacks SERVICEBUS_FULLY_QUALIFIED_NAMESPACE, ORDERS_QUEUE_NAME, COSMOS_ENDPOINT/,
    );
  });

  it('keeps a copy of a local.settings.json it replaces, and makes none when nothing changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hook-'));
    const path = join(dir, 'local.settings.json');
    writeFileSync(path, '{"IsEncrypted":false,"Values":{"MY_OWN":"setting"}}');
    const backup = writeLocalSettings(path, localSettingsFromAzd(env), new Date('2026-12-01T10:00:00.000Z'));
    expect(backup).toBe(`${path}.2026-12-01T10-00-00-000Z.bak`);
    expect(readFileSync(backup ?? '', 'utf8')).toContain('MY_OWN');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(localSettingsFromAzd(env));
    expect(writeLocalSettings(path, localSettingsFromAzd(env))).toBeUndefined();
    expect(readdirSync(dir).sort()).toEqual(['local.settings.json', 'local.settings.json.2026-12-01T10-00-00-000Z.bak']);
  });
});
