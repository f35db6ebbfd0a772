// One consumer of the chaos run, in its own OS process so that it can be killed with SIGKILL:
// the local Functions host running the compiled app against the stack named in the environment.
// Prints one JSON line per delivery (function, MessageId, delivery count, outcome, when it ended) for the tally.
import { join } from 'node:path';
import '../../emulators/functions-host/functionsCore.js'; // before the app loads: the worker's hook that captures registrations
import { loadFunctionApp } from '../../emulators/functions-host/loadFunctionApp.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { findOutcomeLine } from '../local/outcomeLine.js';
import { cosmosTriggerIntervalsVariable, timerLeaseDirectoryVariable } from './consumerFleet.js';

const settings = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
const functions = loadFunctionApp(join(__dirname, '..', '..'));
startLocalFunctionsHost(functions, {
  settings,
  // No renewal beyond the lock's own: a killed process's locks run out as a dead host's do.
  host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
  // The fleet's processes are instances of one app: each timer runs in one of them at a time.
  timerLeaseDirectory: settings[timerLeaseDirectoryVariable],
  // The outbox publisher's leases expire in seconds, so a killed publisher is replaced within the run.
  cosmos: { intervals: JSON.parse(settings[cosmosTriggerIntervalsVariable] ?? '{}') as Record<string, number> },
  onInvocation: (fn, delivery, result) => {
    const line = findOutcomeLine(result);
    process.stdout.write(
      `${JSON.stringify({ chaos: 'delivery', fn: fn.metadata.name, messageId: delivery.messageId, deliveryCount: delivery.deliveryCount, outcome: line?.outcome ?? 'none', at: Date.now() })}\n`,
    );
  },
});
process.stdout.write(`${JSON.stringify({ chaos: 'ready', pid: process.pid })}\n`);
