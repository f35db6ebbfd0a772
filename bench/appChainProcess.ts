// The app's chain of `npm run bench -- --chain`, in its own OS process as a Functions app is: every
// function of the compiled app (dist/) in the local Functions host, with host.json's Service Bus
// settings, the HTTP triggers on a free port, the Cosmos DB trigger with its registered intervals and
// the timers on their default schedules, against the stack named in the environment.
import { join } from 'node:path';
import '../emulators/functions-host/functionsCore.js'; // before the app loads: the worker's hook that captures registrations
import { readHostJson } from '../emulators/functions-host/hostSettings.js';
import { loadFunctionApp } from '../emulators/functions-host/loadFunctionApp.js';
import { startLocalFunctionsHost } from '../emulators/functions-host/localFunctionsHost.js';
import type { RegisteredFunction } from '../emulators/functions-host/functionsCore.js';
import { deliveryLine, publishLine, readyLine } from './chainProcess.js';

/**
 * The outbox publisher's handler, timed: what each change-feed page holds and how long the publisher
 * takes over it. The host reads the feed and invokes one page at a time per lease, so the time summed
 * over a stretch says how busy that single loop was.
 */
function timedPublisher(fn: RegisteredFunction): RegisteredFunction {
  if (fn.metadata.name !== 'publishOutbox') return fn;
  const callback = async (...args: unknown[]) => {
    const documents = Array.isArray(args[0]) ? (args[0] as Record<string, unknown>[]) : [];
    const startedAt = performance.now();
    try {
      return await fn.callback(...args);
    } finally {
      const entries = documents.filter((d) => d.docType === 'outbox' && d.state === 'pending').length;
      process.stdout.write(publishLine({ documents: documents.length, entries, ms: performance.now() - startedAt }));
    }
  };
  return { ...fn, callback };
}

async function main(): Promise<void> {
  const appRoot = join(__dirname, '..');
  const settings = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const host = startLocalFunctionsHost(loadFunctionApp(appRoot).map(timedPublisher), {
    settings,
    host: readHostJson(appRoot),
    http: { port: 0 },
    onInvocation: (fn, delivery, result) => {
      if (result.error !== undefined) console.error(`app chain: ${fn.metadata.name} ${delivery.messageId ?? ''} failed: ${String(result.error)}`);
      const name = fn.metadata.name;
      if (name !== 'processOrder' && name !== 'requestShipment') return;
      process.stdout.write(
        deliveryLine({
          fn: name,
          orderId: delivery.sessionId,
          enqueuedAt: delivery.enqueuedTime?.getTime(),
          deliveryCount: delivery.deliveryCount,
          failed: result.error !== undefined,
        }),
      );
    },
  });
  await host.cosmosTriggers;
  const http = await host.http;
  if (!http) throw new Error('app chain: the HTTP triggers are not served');
  process.once('SIGTERM', () => void host.close().finally(() => process.exit(0)));
  process.stdout.write(readyLine(http.url));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
