import { spawn } from 'node:child_process';
import { startIngestionStandIn } from '../../emulators/ingestion-emulator/ingestionStandIn.js';
import type { TelemetryEnvelope } from '../../emulators/ingestion-emulator/ingestionStandIn.js';

export type LocalTelemetry =
  /** The app exports to the Application Insights resource the environment names. */
  | { readonly destination: 'environment' }
  /** The app exports to the ingestion stand-in this process was started for. */
  | { readonly destination: 'stand-in'; readonly url: string; envelopes(): Promise<readonly TelemetryEnvelope[]> }
  /** This process started the stand-in and ran `npm run local` again beside it: its exit code is the run's. */
  | { readonly destination: 'relaunched'; readonly exitCode: number };

const standInVariable = 'LOCAL_TELEMETRY_STAND_IN';

/**
 * Telemetry for `npm run local`, decided before the app loads (it sets itself up from
 * APPLICATIONINSIGHTS_CONNECTION_STRING as it loads, src/telemetry/startup.ts):
 * - that variable set in the environment: the app exports there (a real Application Insights);
 * - `--telemetry` without it: an ingestion stand-in is started, and the run goes on in a second
 *   process that exports to it. Ingestion is HTTPS, and Node reads the certificates it trusts
 *   (NODE_EXTRA_CA_CERTS) only as a process starts: hence the second process;
 * - neither: no telemetry, as in Azure without a connection string.
 */
export async function startLocalTelemetry(requested: boolean): Promise<LocalTelemetry | undefined> {
  const standInUrl = process.env[standInVariable];
  if (standInUrl) return { destination: 'stand-in', url: standInUrl, envelopes: () => fetchEnvelopes(standInUrl) };
  if (process.env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim()) return { destination: 'environment' };
  if (!requested) return undefined;
  const standIn = await startIngestionStandIn();
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: {
      ...process.env,
      [standInVariable]: standIn.url,
      APPLICATIONINSIGHTS_CONNECTION_STRING: standIn.connectionString,
      NODE_EXTRA_CA_CERTS: standIn.caCertificatePath,
      // The SDK's own usage telemetry goes to a fixed Azure endpoint, unreachable here.
      APPLICATIONINSIGHTS_STATSBEAT_DISABLED: 'true',
    },
  });
  const exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  await standIn.close();
  return { destination: 'relaunched', exitCode };
}

async function fetchEnvelopes(url: string): Promise<readonly TelemetryEnvelope[]> {
  const response = await fetch(new URL('_standin/envelopes', url));
  return (await response.json()) as TelemetryEnvelope[];
}
