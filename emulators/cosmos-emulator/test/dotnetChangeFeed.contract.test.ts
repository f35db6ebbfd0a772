import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { commandAvailable } from '../../../test/support/commands.js';

const run = promisify(execFile);

const suites = commandAvailable('dotnet', '--version') ? [{ client: 'Microsoft.Azure.Cosmos 3.64.0' }] : [];
if (suites.length === 0) console.log('.NET change feed processor check: skipped because the dotnet CLI is not installed');

// The Functions host's Cosmos DB trigger reads the change feed through the .NET SDK's change feed
// processor: the stand-in's feed, pkranges feed, query plans and leases must satisfy it as they do the JS SDK.
describe.runIf(suites.length > 0)(`the Cosmos stand-in's change feed with the .NET change feed processor (${suites[0]?.client ?? 'not installed'})`, () => {
  let checkDll: string;

  beforeAll(async () => {
    const out = mkdtempSync(join(tmpdir(), 'cosmos-dotnet-check-'));
    await run('dotnet', ['build', 'dev/dotnet-cosmos-check', '-c', 'Release', '-o', out, '--nologo', '-v', 'q'], { timeout: 240_000 });
    checkDll = join(out, 'CosmosChangeFeedCheck.dll');
  }, 300_000);

  it('starts from the beginning, delivers live changes, keeps leases, and resumes from the checkpoint in another instance', async () => {
    const { stdout } = await run('dotnet', [checkDll, inject('cosmosEndpoint'), inject('cosmosKey')], { timeout: 120_000 }).catch(
      (error: { stdout?: string }) => ({
        stdout: error.stdout ?? String(error),
      }),
    );
    console.log(stdout.trim());
    expect(stdout).not.toContain('FAIL');
    expect(stdout).toContain('PASS start-from-beginning: 5 of 5');
    expect(stdout).toContain('PASS checkpoint: 0 document(s) delivered again');
    expect(stdout).toContain('all 5 steps passed');
  }, 180_000);
});
