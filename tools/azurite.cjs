// Azurite, the Functions host's storage emulator, started when the host's storage is the emulator and
// nothing serves it yet: `AzureWebJobsStorage=UseDevelopmentStorage=true` means blob, queue and table
// on 127.0.0.1:10000-10002 (the well-known ports the Storage SDKs resolve that value to). Used by
// `npm start` (tools/funcStart.cjs) and `npm run local -- --serve --azurite`. Plain Node: no build needed.
'use strict';
const { spawn } = require('node:child_process');
const { setTimeout: delay } = require('node:timers/promises');
const { existsSync, mkdirSync, readFileSync } = require('node:fs');
const net = require('node:net');
const { join } = require('node:path');

const developmentStorage = 'UseDevelopmentStorage=true';
/** blob, queue, table: what UseDevelopmentStorage=true points at. */
const wellKnownPorts = Object.freeze({ blob: 10000, queue: 10001, table: 10002 });
const startTimeoutMs = 30_000;

/** True when a host with this AzureWebJobsStorage value wants the local emulator. */
function wantsDevelopmentStorage(value) {
  return typeof value === 'string' && value.replace(/;\s*$/, '').trim().toLowerCase() === developmentStorage.toLowerCase();
}

/**
 * The host storage setting Core Tools will use: the environment's, else local.settings.json's Values
 * (Core Tools lets an environment variable win over the file).
 */
function hostStorageSetting(appRoot, env = process.env) {
  if (env.AzureWebJobsStorage !== undefined) return env.AzureWebJobsStorage;
  const file = join(appRoot, 'local.settings.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'))?.Values?.AzureWebJobsStorage;
  } catch (error) {
    throw new Error(`local.settings.json is not valid JSON (${error.message}): Core Tools cannot read it either`);
  }
}

/** Resolves true when something accepts a TCP connection on 127.0.0.1:port. */
function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function portsInUse(ports) {
  const entries = await Promise.all(Object.entries(ports).map(async ([service, port]) => [service, port, await listening(port)]));
  return entries.filter(([, , busy]) => busy).map(([service, port]) => ({ service, port }));
}

/**
 * Starts Azurite unless it is not wanted or already there.
 * - `storage` not UseDevelopmentStorage=true: nothing to do (`{ state: 'not-needed' }`).
 * - all three ports answer: an emulator is already running; it is used as it is (`'already-running'`).
 * - some answer and some not: something else holds a port; an error names it.
 * - none answers: Azurite starts with its data under `location` (`'started'`, with `stop()`).
 * @param {{ storage: string | undefined, location: string, ports?: { blob: number, queue: number, table: number }, log?: (line: string) => void }} options
 */
async function ensureAzurite(options) {
  if (!wantsDevelopmentStorage(options.storage)) return { state: 'not-needed', stop: async () => {} };
  const ports = options.ports ?? wellKnownPorts;
  const busy = await portsInUse(ports);
  if (busy.length === Object.keys(ports).length) return { state: 'already-running', stop: async () => {} };
  if (busy.length > 0) {
    const taken = busy.map((b) => `${b.port} (${b.service})`).join(', ');
    throw new Error(
      `AzureWebJobsStorage=UseDevelopmentStorage=true needs Azurite on 127.0.0.1:${ports.blob}-${ports.table}, but ${taken} is taken by something else: stop it, or set AzureWebJobsStorage to a storage account`,
    );
  }
  const child = startProcess(ports, options.location);
  await waitUntilListening(child, ports);
  (options.log ?? (() => {}))(`Azurite (host storage emulator) on 127.0.0.1:${ports.blob}-${ports.table}, data in ${options.location}`);
  return { state: 'started', stop: () => stopProcess(child) };
}

function startProcess(ports, location) {
  mkdirSync(location, { recursive: true });
  const bin = join(require.resolve('azurite/package.json'), '..', 'dist', 'src', 'azurite.js');
  const args = [
    bin,
    '--silent',
    '--location',
    location,
    '--blobHost',
    '127.0.0.1',
    '--blobPort',
    String(ports.blob),
    '--queueHost',
    '127.0.0.1',
    '--queuePort',
    String(ports.queue),
    '--tableHost',
    '127.0.0.1',
    '--tablePort',
    String(ports.table),
    // No telemetry of Azurite's own (it would call out to the internet), and any API version the SDKs send.
    '--disableTelemetry',
    '--skipApiVersionCheck',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderrText = '';
  child.stderr.on('data', (chunk) => {
    if (child.stderrText.length < 4096) child.stderrText += String(chunk);
  });
  return child;
}

async function waitUntilListening(child, ports) {
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`Azurite exited before it listened (${child.exitCode ?? child.signalCode}): ${child.stderrText.trim() || 'no output'}`);
    if ((await portsInUse(ports)).length === Object.keys(ports).length) return;
    if (Date.now() > deadline) {
      await stopProcess(child);
      throw new Error(`Azurite did not listen on 127.0.0.1:${ports.blob}-${ports.table} within ${startTimeoutMs / 1000} s`);
    }
    await delay(100);
  }
}

function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

module.exports = { developmentStorage, wellKnownPorts, wantsDevelopmentStorage, hostStorageSetting, ensureAzurite };
