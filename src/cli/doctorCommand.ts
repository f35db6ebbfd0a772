import { Agent } from 'node:https';
import { DefaultAzureCredential } from '@azure/identity';
import { ServiceBusAdministrationClient } from '@azure/service-bus';
import type { Command } from 'commander';
import { loadSetupSettings } from '../config.js';
import type { SetupSettings } from '../config.js';
import { createCosmosClient, isLoopbackEndpoint } from '../cosmos/index.js';
import { exitCodeOf, formatCheckLine } from '../doctor/index.js';
import type { CheckResult } from '../doctor/index.js';
import type { DlqIo } from './dlqIo.js';
import type { GlobalOptions } from './globalOptions.js';
import { checkCosmos, checkServiceBus } from './readSetup.js';
import { endpointHostOf } from './serviceBusConnection.js';

/** The global options the doctor reads. */
type DoctorGlobals = Pick<
  GlobalOptions,
  'connectionString' | 'namespace' | 'queue' | 'cosmosEndpoint' | 'cosmosKey' | 'cosmosDatabase' | 'cosmosContainer' | 'timeout'
>;

interface DoctorOptions {
  adminConnectionString?: string;
  cosmosLeasesContainer?: string;
  json?: boolean;
}

/**
 * `doctor`: reads an existing Service Bus namespace (administration API) and Cosmos DB account and
 * says, one line a check, what is ok, missing or wrong for this app. Exit code 0 when all is ok,
 * 1 when anything is missing or wrong, 2 when a service cannot be read at all.
 */
export function addDoctorCommand(program: Command, io: DlqIo, setExitCode: (code: number) => void): void {
  program
    .command('doctor')
    .description(
      "check an existing Service Bus namespace and Cosmos DB account against what the app needs (docs/bring-your-own.md); the app's settings (QUEUE_*, INBOX_MARKER_TTL_SECONDS, ...) are read from the environment",
    )
    .option(
      '--admin-connection-string <cs>',
      "connection string for the administration API when it differs from --connection-string (the local emulator's names its health port)",
      io.env.SERVICEBUS_ADMIN_CONNECTION_STRING,
    )
    .option('--cosmos-leases-container <name>', "the outbox publisher's leases container", io.env.COSMOS_LEASES_CONTAINER)
    .option('--json', 'print JSON for scripts')
    .action(async (options: DoctorOptions) => {
      const globals = program.opts<DoctorGlobals>();
      const settings = settingsOf(globals, options, io.env);
      const results = [...(await checkServiceBusOf(settings, globals, options)), ...(await checkCosmosOf(settings, globals))];
      const code = exitCodeOf(results);
      if (options.json) io.stdout(JSON.stringify({ ok: code === 0, results }, null, 2));
      else {
        for (const r of results) io.stdout(formatCheckLine(r));
        io.stdout(summary(results));
      }
      setExitCode(code);
    });
}

/** The app's settings as its environment gives them, with the names the tool was given on top. */
function settingsOf(globals: DoctorGlobals, options: DoctorOptions, env: Readonly<Record<string, string | undefined>>): SetupSettings {
  return loadSetupSettings({
    ...env,
    ORDERS_QUEUE_NAME: globals.queue ?? env.ORDERS_QUEUE_NAME,
    COSMOS_DATABASE: globals.cosmosDatabase,
    COSMOS_ORDERS_CONTAINER: globals.cosmosContainer,
    COSMOS_LEASES_CONTAINER: options.cosmosLeasesContainer,
  });
}

async function checkServiceBusOf(settings: SetupSettings, globals: DoctorGlobals, options: DoctorOptions): Promise<CheckResult[]> {
  const connectionString = options.adminConnectionString ?? globals.connectionString;
  if (connectionString && globals.namespace) throw new Error('give --connection-string (or --admin-connection-string) or --namespace, not both');
  if (!connectionString && !globals.namespace)
    throw new Error('give --namespace <fqdn> (with az login / managed identity) or --connection-string (or SERVICEBUS_CONNECTION_STRING)');
  const admin = connectionString
    ? new ServiceBusAdministrationClient(connectionString, loopbackTls(connectionString))
    : new ServiceBusAdministrationClient(globals.namespace ?? '', new DefaultAzureCredential());
  const namespace = globals.namespace ?? endpointHostOf(connectionString) ?? '(from the connection string)';
  return checkServiceBus(settings, { admin, namespace, timeoutMs: globals.timeout });
}

/**
 * `@azure/service-bus` 7.9.5 reads an emulator over HTTPS at the Endpoint's host and port. For a
 * loopback endpoint (the local emulator's self-signed certificate) this client alone skips the
 * certificate check, as the Cosmos client does for a loopback endpoint; every other stays verified.
 */
function loopbackTls(connectionString: string): { agent?: Agent } {
  const host = endpointHostOf(connectionString);
  return host && isLoopbackEndpoint(`https://${host}`) ? { agent: new Agent({ rejectUnauthorized: false }) } : {};
}

async function checkCosmosOf(settings: SetupSettings, globals: DoctorGlobals): Promise<CheckResult[]> {
  if (!globals.cosmosEndpoint) throw new Error('give --cosmos-endpoint (or COSMOS_ENDPOINT): the doctor checks the Cosmos DB account too');
  const client = createCosmosClient({ endpoint: globals.cosmosEndpoint, key: globals.cosmosKey });
  try {
    return await checkCosmos(settings, {
      database: client.database(settings.cosmos.databaseName),
      endpoint: globals.cosmosEndpoint,
      timeoutMs: globals.timeout,
    });
  } finally {
    client.dispose();
  }
}

function summary(results: readonly CheckResult[]): string {
  const count = (status: CheckResult['status']) => results.filter((r) => r.status === status).length;
  return `${results.length} checks: ${count('ok')} ok, ${count('MISSING')} missing, ${count('WRONG')} wrong`;
}
