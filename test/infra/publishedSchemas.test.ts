import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import AjvDraft04 from 'ajv-draft-04';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { localSettingsFromAzd } from '../../infra/hooks/writeLocalSettings.cjs';

// The JSON schemas that azd and the Functions tooling publish are outside material: a clone has
// none of them. Point SCHEMAS_DIR at a folder holding azure.yaml.json, host.json and
// local.settings.json (draft 2019-09, draft-07 and draft-04) to validate against them.
const fallback = join('..', 'shared', 'schemas');
const schemasDir = process.env.SCHEMAS_DIR ?? (existsSync(fallback) ? fallback : undefined);
const files = ['azure.yaml.json', 'host.json', 'local.settings.json'];
const missing = schemasDir ? files.filter((f) => !existsSync(join(schemasDir, f))) : files;
const suites = schemasDir && missing.length === 0 ? [{ dir: schemasDir }] : [];
if (suites.length === 0) {
  console.log(
    schemasDir
      ? `Published-schema checks: skipped because ${schemasDir} lacks ${missing.join(', ')}`
      : "Published-schema checks: skipped because SCHEMAS_DIR is not set (the project's own checks in configurationFiles.test.ts still run)",
  );
}

describe.runIf(suites.length > 0)(`configuration files against the published schemas (${suites[0]?.dir ?? 'absent'})`, () => {
  const dir = suites[0]?.dir ?? '';
  const schema = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown> & { $id?: string };
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

  it('azure.yaml is valid, and the schema refuses a service without a host', () => {
    const validate = azureYamlValidator();
    expect(validate(parseYaml(readFileSync('azure.yaml', 'utf8'))), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ name: 'x', services: { api: { project: '.', language: 'ts' } } })).toBe(false);
  });

  it('host.json is valid', () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema('host.json'));
    expect(validate(json('host.json')), JSON.stringify(validate.errors)).toBe(true);
  });

  it('local.settings.sample.json and what the postprovision hook writes are valid', () => {
    const validate = localSettingsValidator();
    expect(validate(json('local.settings.sample.json')), JSON.stringify(validate.errors)).toBe(true);
    const written = localSettingsFromAzd({
      SERVICEBUS_FULLY_QUALIFIED_NAMESPACE: 'sb-x.servicebus.windows.net',
      ORDERS_QUEUE_NAME: 'orders',
      COSMOS_ENDPOINT: 'https://cosmos-x.documents.azure.com:443/',
      COSMOS_DATABASE: 'orders',
      COSMOS_ORDERS_CONTAINER: 'orders',
    });
    expect(validate(written), JSON.stringify(validate.errors)).toBe(true);
  });
});
