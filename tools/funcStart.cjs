#!/usr/bin/env node
// `npm start`: what the Functions quickstarts do (build, then `func start`), with one clear line
// instead of a shell's "command not found" where Core Tools is not installed, and Azurite started
// first when the host's storage is the emulator (AzureWebJobsStorage=UseDevelopmentStorage=true) and
// nothing serves it: without it the host cannot run its Service Bus, timer and Cosmos DB triggers.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { join } = require('node:path');
const { ensureAzurite, hostStorageSetting } = require('./azurite.cjs');

const appRoot = join(__dirname, '..');

async function main() {
  const probe = spawnSync('func', ['--version'], { stdio: 'ignore', shell: process.platform === 'win32' });
  if (probe.error || probe.status !== 0) {
    console.error(
      'Azure Functions Core Tools (func) is not installed: run `npm run local -- --serve` for the Docker-free local stack with this app, or install Core Tools v4 and the settings it prints (docs/local-stack.md).',
    );
    return 1;
  }
  const azurite = await ensureAzurite({ storage: hostStorageSetting(appRoot), location: join(appRoot, '.azurite'), log: (line) => console.log(line) });
  if (azurite.state === 'already-running') console.log('Host storage: the emulator already listening on 127.0.0.1:10000-10002 is used.');
  const func = spawn('func', ['start', ...process.argv.slice(2)], { stdio: 'inherit', shell: process.platform === 'win32' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => func.kill(signal));
  const code = await new Promise((resolve) => func.on('exit', (exitCode, signal) => resolve(signal ? 1 : (exitCode ?? 1))));
  await azurite.stop();
  return code;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
