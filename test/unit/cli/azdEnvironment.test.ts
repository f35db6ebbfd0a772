import { mkdirSync, mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAzdValues, readAzdEnvironment } from '../../../src/cli/azdEnvironment.js';

// What `azd env get-values` prints after `azd up` (azd quotes every value, escaping with backslashes).
const azdOutput = [
  'AZURE_ENV_NAME="ci"',
  'AZURE_LOCATION="westeurope"',
  'SERVICEBUS_FULLY_QUALIFIED_NAMESPACE="sb-abc.servicebus.windows.net"',
  'COSMOS_ENDPOINT="https://cosmos-abc.documents.azure.com:443/"',
  'ORDERS_QUEUE_NAME="orders"',
  'QUOTED="say \\"hi\\" \\\\ done"',
  'MULTILINE="a\\nb"',
  "SINGLE='as is \\n'",
  'PLAIN=bare # a comment',
  'not an assignment',
  '',
].join('\n');

describe('parseAzdValues', () => {
  it('reads the values azd prints, unescaped', () => {
    expect(parseAzdValues(azdOutput)).toEqual({
      AZURE_ENV_NAME: 'ci',
      AZURE_LOCATION: 'westeurope',
      SERVICEBUS_FULLY_QUALIFIED_NAMESPACE: 'sb-abc.servicebus.windows.net',
      COSMOS_ENDPOINT: 'https://cosmos-abc.documents.azure.com:443/',
      ORDERS_QUEUE_NAME: 'orders',
      QUOTED: 'say "hi" \\ done',
      MULTILINE: 'a\nb',
      SINGLE: 'as is \\n',
      PLAIN: 'bare',
    });
  });

  it('skips an unterminated quote rather than guess', () => {
    expect(parseAzdValues('A="open\nB="ok"')).toEqual({ B: 'ok' });
  });
});

describe('readAzdEnvironment', () => {
  const fakeAzd = (script: string) => {
    const bin = mkdtempSync(join(tmpdir(), 'fake-azd-'));
    writeFileSync(join(bin, 'azd'), `#!/bin/sh\n${script}\n`);
    chmodSync(join(bin, 'azd'), 0o755);
    return bin;
  };
  const project = (withAzure: boolean) => {
    const dir = mkdtempSync(join(tmpdir(), 'azd-project-'));
    if (withAzure) mkdirSync(join(dir, '.azure'));
    return dir;
  };

  it('runs azd env get-values inside an azd project with azd on PATH', async () => {
    const bin = fakeAzd(`[ "$1 $2" = "env get-values" ] && printf '%s\\n' 'COSMOS_ENDPOINT="https://c.documents.azure.com:443/"'`);
    expect(await readAzdEnvironment(project(true), { PATH: `${bin}:/usr/bin:/bin` })).toEqual({ COSMOS_ENDPOINT: 'https://c.documents.azure.com:443/' });
  });

  it('reads nothing outside an azd project, without azd, or when azd fails', async () => {
    const bin = fakeAzd(`printf '%s\\n' 'A="1"'`);
    expect(await readAzdEnvironment(project(false), { PATH: `${bin}:/usr/bin:/bin` })).toEqual({});
    expect(await readAzdEnvironment(project(true), { PATH: '/nonexistent' })).toEqual({});
    const failing = fakeAzd(`echo 'ERROR: no environment selected' >&2; exit 1`);
    expect(await readAzdEnvironment(project(true), { PATH: `${failing}:/usr/bin:/bin` })).toEqual({});
  });
});
