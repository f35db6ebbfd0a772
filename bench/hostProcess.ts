// A child process of `npm run bench -- --host`: the local stack (`--stack`), a consumer of the orders
// queue (`--consumer app|bare`), or both (the "together" layout). Commands on stdin, reports on
// stdout (bench/hostLines.ts). The app is the compiled app (dist/) in the local Functions host with
// processOrder alone (every other function disabled by its AzureWebJobs.<name>.Disabled setting) and
// host.json's Service Bus settings; the bare consumer is a ServiceBusReceiver with the same
// concurrency and settlement doing bench/hostBareWork.ts. Settings come from the environment, or from
// the stack when it runs here too.
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import '../emulators/functions-host/functionsCore.js'; // before the app loads: the worker's hook that captures registrations
import { readHostJson } from '../emulators/functions-host/hostSettings.js';
import { loadFunctionApp } from '../emulators/functions-host/loadFunctionApp.js';
import { startLocalFunctionsHost } from '../emulators/functions-host/localFunctionsHost.js';
import { startLocalStack } from '../dev/local/localStack.js';
import type { LocalStack } from '../dev/local/localStack.js';
import { bareContainer, startBareConsumer } from './hostBareConsumer.js';
import { hostLine, preciseNow } from './hostLines.js';
import type { HostCommand } from './hostLines.js';

const appRoot = join(__dirname, '..');
const ordersQueue = 'orders';

interface Drain {
  firstAt?: number;
  deliveries: number;
  failed: number;
  close(): Promise<void>;
}

type StartConsumer = (path: string, drain: Drain) => Promise<() => Promise<void>>;

function appConsumer(settings: Readonly<Record<string, string>>): StartConsumer {
  const functions = loadFunctionApp(appRoot);
  const disabled = Object.fromEntries(
    functions.filter((fn) => fn.metadata.name !== 'processOrder').map((fn) => [`AzureWebJobs.${fn.metadata.name}.Disabled`, 'true']),
  );
  const host = readHostJson(appRoot);
  return async (_path, drain) => {
    const running = startLocalFunctionsHost(functions, {
      settings: { ...settings, ...disabled },
      host,
      beforeInvocation: async () => void (drain.firstAt ??= preciseNow()),
      onInvocation: (_fn, _delivery, result) => {
        drain.deliveries += 1;
        if (result.error !== undefined) drain.failed += 1;
      },
    });
    return () => running.close();
  };
}

function bareConsumer(settings: Readonly<Record<string, string>>): StartConsumer {
  const host = readHostJson(appRoot);
  const container = bareContainer(settings);
  return async (path, drain) => startBareConsumer(container, settings, host, path, drain);
}

/** Resolves with the moment the orders queue holds no message, checked every 2 ms in this process (no I/O). */
function watchDrain(stack: LocalStack): Promise<{ at: number; deadLettered: number }> {
  const queue = stack.serviceBus.entity(ordersQueue);
  const deadLetters = stack.serviceBus.entity(`${ordersQueue}/$DeadLetterQueue`);
  if (!queue) throw new Error(`host bench: the stack has no ${ordersQueue} queue`);
  const before = deadLetters?.messages.size ?? 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (queue.messages.size > 0) return;
      clearInterval(timer);
      resolve({ at: preciseNow(), deadLettered: (deadLetters?.messages.size ?? 0) - before });
    }, 2);
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const consumerKind = argv.includes('--consumer') ? argv[argv.indexOf('--consumer') + 1] : undefined;
  const stack = argv.includes('--stack') ? await startLocalStack({ wellKnownPorts: false }) : undefined;
  // The app reads its settings from process.env as it loads.
  if (stack) Object.assign(process.env, stack.settings);
  const settings = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const start = consumerKind === 'app' ? appConsumer(settings) : consumerKind === 'bare' ? bareConsumer(settings) : undefined;
  if (consumerKind !== undefined && !start) throw new Error(`host bench: --consumer is app or bare, not ${consumerKind}`);
  let drain: Drain | undefined;
  const quit = async () => {
    await drain?.close();
    await stack?.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void quit());
  createInterface({ input: process.stdin }).on('line', (line) => {
    const command = JSON.parse(line) as HostCommand;
    void (async () => {
      switch (command.cmd) {
        case 'watch': {
          if (!stack) throw new Error('host bench: watch needs --stack');
          const drained = watchDrain(stack);
          process.stdout.write(hostLine({ host: 'watching' }));
          const { at, deadLettered } = await drained;
          return void process.stdout.write(hostLine({ host: 'drained', at, deadLettered }));
        }
        case 'start': {
          if (!start) throw new Error('host bench: start needs --consumer');
          const current: Drain = { deliveries: 0, failed: 0, close: async () => undefined };
          current.close = await start(command.path, current);
          drain = current;
          return void process.stdout.write(hostLine({ host: 'started' }));
        }
        case 'stop': {
          const stopped = drain;
          drain = undefined;
          await stopped?.close();
          return void process.stdout.write(
            hostLine({ host: 'stopped', firstAt: stopped?.firstAt, deliveries: stopped?.deliveries ?? 0, failed: stopped?.failed ?? 0 }),
          );
        }
        case 'quit':
          return quit();
      }
    })().catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
  process.stdout.write(hostLine({ host: 'ready', settings: stack?.settings }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
