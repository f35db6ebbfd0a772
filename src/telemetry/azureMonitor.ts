import { ManagedIdentityCredential } from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import { ConfigurationError } from '../configurationError.js';

import type * as DistroModule from './azureMonitorDistro.js';

type Distro = typeof DistroModule;

/** The distro, loaded on first use: unset telemetry must cost nothing, not even the 0.6 s of loading it. */
function distro(): Distro {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load, on purpose (above)
  return require('./azureMonitorDistro.js') as Distro;
}

let started = false;

/**
 * Telemetry for the whole worker, set up once before any function registers (functions/ import
 * `src/telemetry/startup.js` first), with Microsoft's Azure Monitor OpenTelemetry distribution
 * (`applicationinsights` 3.x) and the Functions instrumentation, which tells the host the worker
 * sends its own logs (no duplicates) and runs each handler in the invocation's trace context.
 * - Unset `APPLICATIONINSIGHTS_CONNECTION_STRING`: nothing is set up; the OpenTelemetry API stays
 *   a no-op, at no measurable cost.
 * - `APPLICATIONINSIGHTS_AUTHENTICATION_STRING=ClientId=<id>;Authorization=AAD` (the Bicep sets
 *   it): the exporter authenticates with that managed identity, as the resource's disabled local
 *   auth requires.
 * Nothing is sampled: a conflict or an invalid message must never be the trace that was dropped.
 */
export function startAzureMonitor(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const connectionString = env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim();
  if (!connectionString) return false;
  if (started) return true;
  // The distro raises the Azure SDKs' log level to warning, and Cosmos DB logs every 404 and 409 as one:
  // here those are answers (a duplicate, a record not yet written), not warnings. Either variable overrides.
  if (!process.env.AZURE_LOG_LEVEL && !process.env.APPLICATIONINSIGHTS_INSTRUMENTATION_LOGGING_LEVEL) process.env.AZURE_LOG_LEVEL = 'error';
  distro().startDistro(connectionString, credentialFrom(env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING));
  started = true;
  return true;
}

/**
 * Sends what is queued (metrics are otherwise exported once a minute): before a process ends. The
 * providers are process-wide (the OpenTelemetry API's globals), so this works from any copy of
 * this module, the compiled app's or the sources'.
 */
export async function flushTelemetry(env: Readonly<Record<string, string | undefined>> = process.env): Promise<void> {
  if (env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim()) await distro().flushAzureMonitor();
}

export async function stopAzureMonitor(): Promise<void> {
  if (!started) return;
  await distro().shutdownAzureMonitor();
  started = false;
}

/** `Authorization=AAD` with an optional `ClientId`: a managed identity; anything else is refused by name. */
export function credentialFrom(authenticationString: string | undefined): TokenCredential | undefined {
  const text = authenticationString?.trim();
  if (!text) return undefined;
  const fields = new Map(
    text
      .split(';')
      .filter((part) => part.includes('='))
      .map((part) => [part.slice(0, part.indexOf('=')).trim().toLowerCase(), part.slice(part.indexOf('=') + 1).trim()] as const),
  );
  if (fields.get('authorization') !== 'AAD') {
    throw new ConfigurationError([
      { setting: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING', problem: 'must be Authorization=AAD, with ClientId=<client id> for a user-assigned identity' },
    ]);
  }
  const clientId = fields.get('clientid');
  return clientId ? new ManagedIdentityCredential({ clientId }) : new ManagedIdentityCredential();
}
