import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import '../../emulators/functions-host/functionsCore.js'; // before the app loads: the worker's hook that captures registrations
import { loadFunctionApp } from '../../emulators/functions-host/loadFunctionApp.js';
import { readHostJson } from '../../emulators/functions-host/hostSettings.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { developmentStorage, ensureAzurite } from '../../tools/azurite.cjs';
import { startLocalStack } from './localStack.js';
import type { LocalStack } from './localStack.js';
import { localSettingsJson } from './coreToolsSettings.js';
import { deliveryLine } from './deliveryLine.js';
import { startLocalTelemetry } from './localTelemetry.js';
import { runDemo } from './runDemo.js';
import { runbookDemoSettings, seedRunbookScenario } from './runbookDemo.js';

const appRoot = join(__dirname, '..', '..');
const demoLockDurationMs = 5_000;

const program = new Command('npm run local --')
  .description('The Docker-free local stack: Service Bus emulator, Cosmos DB stand-in and a local Functions host running this app.')
  .option('--serve', 'keep the stack up on the usual ports (5672, 8081) and print its settings, until Ctrl-C')
  .option('--no-functions', 'with --serve: run only the emulators, for `func start` or your own consumer')
  .option(
    '--runbook-demo',
    'with --serve: leave one case of each runbook scenario (a conflict, a payment rejected as OrderNeverArrived, a failed outbox entry, an escalated shipment, a dead letter in each entity), for the runbook (docs/operations.md)',
  )
  .option(
    '--azurite',
    'with --serve: also start Azurite, the host storage `func start` needs (AzureWebJobsStorage=UseDevelopmentStorage=true), on 10000-10002, data in .azurite/',
  )
  .option('--verbose', "with --serve: print each delivery's JSON log lines instead of one short line")
  .option(
    '--servicebus-config <Config.json>',
    "with --serve --no-functions: the entities of a Config.json of Microsoft's Service Bus emulator, so its samples run unchanged",
  )
  .option('--orders <count>', 'orders in the sample workload', positiveInteger, 100)
  .option(
    '--telemetry',
    'export telemetry to a local Application Insights ingestion stand-in and print what it received (with APPLICATIONINSIGHTS_CONNECTION_STRING set, the app exports there anyway)',
  )
  .showHelpAfterError();

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new InvalidArgumentError('a whole number from 1 to 10000');
  return n;
}

async function main(): Promise<void> {
  const options = program.parse().opts<{
    serve?: boolean;
    functions: boolean;
    orders: number;
    runbookDemo?: boolean;
    verbose?: boolean;
    servicebusConfig?: string;
    telemetry?: boolean;
    azurite?: boolean;
  }>();
  if (options.runbookDemo && (!options.serve || !options.functions)) program.error('--runbook-demo needs --serve with the functions running');
  if (options.servicebusConfig && (!options.serve || options.functions))
    program.error('--servicebus-config needs --serve --no-functions (the app needs the entities of infra/servicebus-queues.json)');
  if (options.azurite && !options.serve) program.error('--azurite needs --serve (it keeps Azurite up beside the stack for `func start`)');
  if (options.serve) {
    await serve(options.functions, options.runbookDemo === true, options.verbose === true, options.servicebusConfig, options.azurite === true);
    return;
  }
  const telemetry = await startLocalTelemetry(options.telemetry === true);
  if (telemetry?.destination === 'relaunched') {
    process.exitCode = telemetry.exitCode;
    return;
  }
  if (telemetry)
    console.log(
      `Telemetry: exporting to ${telemetry.destination === 'stand-in' ? `an Application Insights ingestion stand-in on ${telemetry.url}` : 'the Application Insights resource of APPLICATIONINSIGHTS_CONNECTION_STRING'}.`,
    );
  console.log(`Starting the local stack (queue lock shortened to ${demoLockDurationMs / 1000} s so that crashed consumers' locks run out quickly)...`);
  const stack = await startLocalStack({ wellKnownPorts: false, lockDurationMs: demoLockDurationMs });
  Object.assign(process.env, stack.settings);
  const functions = loadFunctionApp(appRoot);
  console.log(`Loaded ${functions.map((f) => f.metadata.name).join(', ')}; sending ${options.orders} orders...`);
  const ok = await runDemo(stack, functions, options.orders, telemetry).finally(() => stack.close());
  process.exitCode = ok ? 0 : 1;
}

const coreToolsHttpPort = 7071;

async function serve(
  withFunctions: boolean,
  runbookDemo: boolean,
  verbose: boolean,
  serviceBusConfigPath: string | undefined,
  withAzurite: boolean,
): Promise<void> {
  // Azurite first: if its ports are taken, nothing else has been started yet.
  const azurite = withAzurite
    ? await ensureAzurite({ storage: developmentStorage, location: join(appRoot, '.azurite'), log: (line) => console.log(line) })
    : undefined;
  if (azurite?.state === 'already-running') console.log('Azurite (host storage emulator): already listening on 127.0.0.1:10000-10002, used as it is.');
  const stack: LocalStack = await startLocalStack({ wellKnownPorts: true, serviceBusConfigPath }).catch(async (error: unknown) => {
    await azurite?.stop();
    throw error;
  });
  console.log('The local stack is up: Service Bus emulator on 5672 (GET http://127.0.0.1:5300/health), Cosmos DB stand-in on 8081.');
  if (serviceBusConfigPath) console.log(`Service Bus entities from ${serviceBusConfigPath}.`);
  console.log('Every setting the app (or Core Tools, as local.settings.json) needs against it:\n');
  console.log(localSettingsJson(stack.settings));
  let close = () => stack.close();
  if (withFunctions) {
    Object.assign(process.env, stack.settings, runbookDemo ? runbookDemoSettings : {});
    if (runbookDemo)
      console.log(
        `\nFor the runbook demo the parking horizon and the sweeper's schedule are shortened: ${Object.entries(runbookDemoSettings)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
    const host = startLocalFunctionsHost(loadFunctionApp(appRoot), {
      settings: { ...stack.settings, ...(runbookDemo ? runbookDemoSettings : {}) },
      host: readHostJson(appRoot),
      // Core Tools' port: the README's curl examples work against --serve as against `func start`.
      http: {
        port: coreToolsHttpPort,
        onInvocation: (fn, result) => {
          for (const log of result.logs) console.log(`[${fn.metadata.name}] ${log.message}`);
          if (result.error) console.log(`[${fn.metadata.name}] failed: ${String(result.error)} (answered 500)`);
        },
      },
      onInvocation: (fn, delivery, result) => {
        if (!verbose) return console.log(deliveryLine(fn.metadata.name, delivery, result));
        for (const log of result.logs) console.log(`[${fn.metadata.name}] ${log.message}`);
        if (result.error) console.log(`[${fn.metadata.name}] ${delivery.messageId ?? ''} failed: ${String(result.error)} (Service Bus will redeliver)`);
      },
      onTimerInvocation: (fn, result) => {
        for (const log of result.logs) console.log(`[${fn.metadata.name}] ${log.message}`);
        if (result.error) console.log(`[${fn.metadata.name}] failed: ${String(result.error)} (the next occurrence runs as scheduled)`);
      },
    });
    const http = await host.http.catch(async (error: unknown) => {
      await host.close();
      await stack.close();
      await azurite?.stop();
      throw new Error(
        `the HTTP triggers cannot listen on port ${coreToolsHttpPort} (${(error as Error).message}): is \`func start\` or another \`npm run local -- --serve\` running?`,
      );
    });
    for (const route of http?.routes ?? [])
      console.log(`\n  ${route.functionName} serves ${route.methods.join(', ')} ${new URL(route.route.slice(1), http?.url).toString()}`);
    for (const l of host.listeners) console.log(`\n  ${l.functionName} is listening on queue ${l.queueName}`);
    for (const t of host.timers) console.log(`\n  ${t.functionName} runs on schedule ${t.schedule} (NCRONTAB, UTC)`);
    close = async () => {
      await host.close();
      await stack.close();
    };
  }
  console.log('\nCtrl-C to stop.');
  if (runbookDemo) void seedRunbookScenario(stack, (line) => console.log(line)).catch((error: unknown) => console.error(String(error)));
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  await close();
  await azurite?.stop();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
