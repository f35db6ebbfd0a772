import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import AjvDraft04 from 'ajv-draft-04';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { localSettingsFromAzd } from '../../infra/hooks/localSettingsFromAzd.js';
import { loadSettings } from '../../src/config.js';

const schema = (name: string) => JSON.parse(readFileSync(`../shared/schemas/${name}`, 'utf8')) as Record<string, unknown> & { $id?: string };
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as unknown;

function azureYamlValidator() {
  const azureYaml = schema('azure.yaml.json');
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // The schema refers to azd extensions' schemas by URL; none concerns a function host, and none can be fetched offline.
  const external = new Set(JSON.stringify(azureYaml).match(/https:\/\/raw\.githubusercontent\.com[^"#]+/g) ?? []);
  external.delete(String(azureYaml.$id));
  for (const url of external) ajv.addSchema({}, url);
  return ajv.compile(azureYaml);
}

const localSettingsValidator = () => new AjvDraft04({ strict: false, allErrors: true }).compile(schema('local.settings.json'));

describe('configuration files against the published schemas (../shared/schemas)', () => {
  it('azure.yaml is valid and declares the function service in TypeScript', () => {
    const validate = azureYamlValidator();
    const config = parseYaml(readFileSync('azure.yaml', 'utf8')) as { services: { api: Record<string, unknown> } };
    expect(validate(config), JSON.stringify(validate.errors)).toBe(true);
    expect(config.services.api).toMatchObject({ host: 'function', language: 'ts', project: '.' });
  });

  it('the azure.yaml schema does refuse a bad file (the check can fail)', () => {
    const validate = azureYamlValidator();
    expect(validate({ name: 'x', services: { api: { project: '.', language: 'ts' } } })).toBe(false);
  });

  it('host.json is valid', () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema('host.json'));
    expect(validate(json('host.json')), JSON.stringify(validate.errors)).toBe(true);
  });

  it('local.settings.sample.json is valid, IsEncrypted a boolean, and accepted by the app', () => {
    const validate = localSettingsValidator();
    const sample = json('local.settings.sample.json') as { IsEncrypted: unknown; Values: Record<string, string> };
    expect(validate(sample), JSON.stringify(validate.errors)).toBe(true);
    expect(sample.IsEncrypted).toBe(false);
    expect(() => loadSettings(sample.Values)).not.toThrow();
  });

  it('local.settings.sample.json lists every setting the README documents', () => {
    const readme = readFileSync('README.md', 'utf8');
    const documented = [...readme.matchAll(/^\| `([A-Za-z_]+)` \|/gm)].map((m) => m[1] ?? '')
      .filter((n) => /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(n) || n === 'ServiceBusConnection');
    const sample = Object.keys((json('local.settings.sample.json') as { Values: object }).Values);
    expect(documented.length).toBeGreaterThan(10);
    // COSMOS_CA_CERT_PATH names a file on the developer's machine: no sample value makes sense.
    expect(documented.filter((n) => !sample.includes(n) && n !== 'COSMOS_CA_CERT_PATH')).toEqual([]);
  });
});

describe('the postprovision hook (localSettingsFromAzd)', () => {
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
    DLQ_RESUBMIT_HORIZON_SECONDS: '1209600',
    INBOX_MARKER_TTL_SECONDS: '2592000',
  };

  it('writes a valid local.settings.json with identity-based connections and no key', () => {
    const settings = localSettingsFromAzd(env);
    const validate = localSettingsValidator();
    expect(validate(settings), JSON.stringify(validate.errors)).toBe(true);
    expect(settings.IsEncrypted).toBe(false);
    expect(Object.values(settings.Values).every((v) => typeof v === 'string')).toBe(true);
    expect(settings.Values).toMatchObject({ ServiceBusConnection__fullyQualifiedNamespace: 'sb-x.servicebus.windows.net', INBOX_MARKER_TTL_SECONDS: '2592000' });
    expect(Object.keys(settings.Values).filter((k) => /KEY|SECRET/.test(k))).toEqual([]);
    expect(() => loadSettings(settings.Values)).not.toThrow();
  });

  it('names what is missing when the environment was never provisioned', () => {
    expect(() => localSettingsFromAzd({ AZURE_LOCATION: 'westeurope' })).toThrow(/lacks SERVICEBUS_FULLY_QUALIFIED_NAMESPACE, ORDERS_QUEUE_NAME, COSMOS_ENDPOINT/);
  });
});
