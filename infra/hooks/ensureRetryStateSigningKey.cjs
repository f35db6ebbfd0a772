#!/usr/bin/env node
// azd preprovision hook: gives the azd environment its retry state signing key once, and keeps it.
// Plain Node (no TypeScript, no npx, no shell): azd runs it on every platform before the app is built.
'use strict';
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');

const keyName = 'RETRY_STATE_SIGNING_KEY';
const previousKeyName = 'RETRY_STATE_SIGNING_KEY_PREVIOUS';
/** What the app's start-up validation requires (src/config.ts). */
const minimumLength = 32;

/**
 * The key signs the retry state of delayed-retry copies. A new key at each provision would make every
 * copy in flight a first attempt again (its retry budget restarted), so it is drawn once per
 * environment and kept in it (`.azure/<environment>/.env`; main.parameters.json passes it to Key
 * Vault). A key already there, set by an operator or as a pipeline's secret variable, is kept as it is.
 * In a pipeline none is drawn: its azd environment usually lives as long as the run, so a key drawn
 * there would be a new one at every run.
 * Returns what it did: 'generated' or 'kept'. Throws, naming the setting, for a key the app would refuse.
 */
function provideRetryStateSigningKey(environment, options = { inPipeline: false }) {
  const values = environment.read();
  for (const name of [keyName, previousKeyName]) {
    const value = (values[name] ?? '').trim();
    if (value !== '' && value.length < minimumLength) {
      throw new Error(
        `${name} is ${value.length} characters: it must be at least ${minimumLength} (azd env set ${name} <a random secret>, or unset it to have one generated)`,
      );
    }
  }
  if ((values[keyName] ?? '').trim() !== '') return 'kept';
  if (options.inPipeline) {
    throw new Error(
      `${keyName} is not set. In a pipeline, give it as a secret variable (a random value of 64 hex characters, made once per environment: ` +
        `node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"); a key drawn here would change at every run and restart every retry budget in flight`,
    );
  }
  // Hex: 256 random bits, and never a leading '-' that azd would read as a flag.
  environment.set(keyName, randomBytes(32).toString('hex'));
  return 'generated';
}

/** The azd environment this hook runs for, through the azd CLI (`--environment` from AZURE_ENV_NAME, which azd sets for hooks). */
function azdEnvironment(name) {
  const scope = name ? ['--environment', name] : [];
  return {
    // azd reads a `${NAME}` in main.parameters.json from the environment's .env, then from the process
    // environment (a pipeline's variables): so does this.
    read: () => ({
      ...definedOnly(process.env),
      ...JSON.parse(execFileSync('azd', ['env', 'get-values', '--output', 'json', ...scope], { encoding: 'utf8' })),
    }),
    set: (key, value) => execFileSync('azd', ['env', 'set', key, value, ...scope], { stdio: ['ignore', 'ignore', 'inherit'] }),
  };
}

/** The variables Azure Pipelines (TF_BUILD), GitHub Actions and most CI systems (CI) set. */
function runsInPipeline(env) {
  return [env.TF_BUILD, env.GITHUB_ACTIONS, env.CI].some((v) => typeof v === 'string' && /^(true|1)$/i.test(v.trim()));
}

function definedOnly(env) {
  return Object.fromEntries(Object.entries(env).filter((e) => typeof e[1] === 'string'));
}

function main() {
  const name = process.env.AZURE_ENV_NAME;
  const action = provideRetryStateSigningKey(azdEnvironment(name), { inPipeline: runsInPipeline(process.env) });
  const where = name ? `environment ${name}` : 'the default environment';
  if (action === 'generated')
    console.log(
      `preprovision: generated ${keyName} for ${where} (kept in its .env; written to Key Vault by the provision). See docs/deployment.md to rotate it.`,
    );
  else console.log(`preprovision: ${keyName} of ${where} kept.`);
}

module.exports = { provideRetryStateSigningKey, runsInPipeline };
if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(`preprovision: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
