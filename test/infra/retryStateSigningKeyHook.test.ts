import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config.js';
import { provideRetryStateSigningKey, runsInPipeline } from '../../infra/hooks/ensureRetryStateSigningKey.cjs';
import type { AzdEnvironmentStore } from '../../infra/hooks/ensureRetryStateSigningKey.cjs';

/** An azd environment in memory: what `azd env get-values` prints and what `azd env set` changes. */
function environment(initial: Record<string, string> = {}): AzdEnvironmentStore & { readonly values: Record<string, string>; readonly sets: string[] } {
  const values = { ...initial };
  const sets: string[] = [];
  return {
    values,
    sets,
    read: () => ({ ...values }),
    set: (name, value) => {
      sets.push(name);
      values[name] = value;
    },
  };
}

describe('the preprovision hook (infra/hooks/ensureRetryStateSigningKey.cjs)', () => {
  it('generates the key once for an environment that has none, and keeps it at every later provision', () => {
    const env = environment({ AZURE_ENV_NAME: 'dev' });
    expect(provideRetryStateSigningKey(env)).toBe('generated');
    const key = env.values.RETRY_STATE_SIGNING_KEY ?? '';
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(provideRetryStateSigningKey(env)).toBe('kept');
    expect(provideRetryStateSigningKey(env)).toBe('kept');
    expect(env.sets).toEqual(['RETRY_STATE_SIGNING_KEY']);
    expect(env.values.RETRY_STATE_SIGNING_KEY).toBe(key);
    // What the app then reads: a key its start-up validation accepts.
    expect(loadSettings({ ...process.env, RETRY_STATE_SIGNING_KEY: key }).retry.stateSigningKey).toBe(key);
  });

  it('draws a new random key for each environment', () => {
    const [a, b] = [environment(), environment()];
    provideRetryStateSigningKey(a);
    provideRetryStateSigningKey(b);
    expect(a.values.RETRY_STATE_SIGNING_KEY).not.toBe(b.values.RETRY_STATE_SIGNING_KEY);
  });

  it("keeps a key that is already there (set by an operator, or a pipeline's secret variable), and never touches the previous one", () => {
    const env = environment({ RETRY_STATE_SIGNING_KEY: 'o'.repeat(40), RETRY_STATE_SIGNING_KEY_PREVIOUS: 'p'.repeat(40) });
    expect(provideRetryStateSigningKey(env)).toBe('kept');
    expect(env.sets).toEqual([]);
    expect(env.values).toEqual({ RETRY_STATE_SIGNING_KEY: 'o'.repeat(40), RETRY_STATE_SIGNING_KEY_PREVIOUS: 'p'.repeat(40) });
  });

  it('generates one when the value is there but empty or blank', () => {
    const env = environment({ RETRY_STATE_SIGNING_KEY: '  ' });
    expect(provideRetryStateSigningKey(env)).toBe('generated');
    expect(env.values.RETRY_STATE_SIGNING_KEY).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stops the provision, naming the setting, when a key or the previous key is shorter than the app accepts', () => {
    expect(() => provideRetryStateSigningKey(environment({ RETRY_STATE_SIGNING_KEY: 'short' }))).toThrow(
      /RETRY_STATE_SIGNING_KEY is 5 characters: it must be at least 32/,
    );
    const env = environment({ RETRY_STATE_SIGNING_KEY_PREVIOUS: 'p'.repeat(31) });
    expect(() => provideRetryStateSigningKey(env)).toThrow(/RETRY_STATE_SIGNING_KEY_PREVIOUS is 31 characters: it must be at least 32/);
    expect(env.sets).toEqual([]);
  });

  it('draws none in a pipeline (its environment lasts one run, so a drawn key would change every run): it asks for a secret variable, and keeps one given', () => {
    const env = environment();
    expect(() => provideRetryStateSigningKey(env, { inPipeline: true })).toThrow(
      /RETRY_STATE_SIGNING_KEY is not set\. In a pipeline, give it as a secret variable/,
    );
    expect(env.sets).toEqual([]);
    expect(provideRetryStateSigningKey(environment({ RETRY_STATE_SIGNING_KEY: 'o'.repeat(64) }), { inPipeline: true })).toBe('kept');
    expect([{ TF_BUILD: 'True' }, { GITHUB_ACTIONS: 'true' }, { CI: '1' }, { CI: 'true' }].map(runsInPipeline)).toEqual([true, true, true, true]);
    expect([{}, { CI: 'false' }, { CI: '' }, { TF_BUILD: '0' }].map(runsInPipeline)).toEqual([false, false, false, false]);
  });

  it('asks azd for the environment it runs in (AZURE_ENV_NAME) and sets the key there, printing no secret', () => {
    // A stand-in for the azd CLI on PATH: answers get-values from a file and records every call.
    const dir = mkdtempSync(join(tmpdir(), 'fake-azd-'));
    const calls = join(dir, 'calls.txt');
    writeFileSync(join(dir, 'values.json'), JSON.stringify({ AZURE_ENV_NAME: 'prod', AZURE_LOCATION: 'westeurope' }));
    const azd = join(dir, 'azd');
    writeFileSync(
      azd,
      `#!/usr/bin/env node\nconst fs = require('node:fs');\nfs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify(process.argv.slice(2)) + '\\n');\nif (process.argv[3] === 'get-values') process.stdout.write(fs.readFileSync(${JSON.stringify(join(dir, 'values.json'))}, 'utf8'));\n`,
    );
    chmodSync(azd, 0o755);
    const run = () =>
      spawnSync(process.execPath, ['infra/hooks/ensureRetryStateSigningKey.cjs'], {
        encoding: 'utf8',
        env: { PATH: `${dir}${delimiter}${process.env.PATH ?? ''}`, AZURE_ENV_NAME: 'prod' },
      });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    const recorded = readFileSync(calls, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    expect(recorded[0]).toEqual(['env', 'get-values', '--output', 'json', '--environment', 'prod']);
    expect(recorded[1]?.slice(0, 3)).toEqual(['env', 'set', 'RETRY_STATE_SIGNING_KEY']);
    expect(recorded[1]?.[3]).toMatch(/^[0-9a-f]{64}$/);
    expect(recorded[1]?.slice(4)).toEqual(['--environment', 'prod']);
    expect(first.stdout).toContain('generated RETRY_STATE_SIGNING_KEY for environment prod');
    expect(first.stdout).not.toContain(recorded[1]?.[3]);
  });
});
