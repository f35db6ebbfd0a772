import { ManagedIdentityCredential } from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import { AzureFunctionsInstrumentation } from '@azure/functions-opentelemetry-instrumentation';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { flushAzureMonitor, shutdownAzureMonitor, useAzureMonitor } from 'applicationinsights';
import type { AzureMonitorOpenTelemetryOptions } from 'applicationinsights';
import { ConfigurationError } from '../idempotency/index.js';
import { StructuredLineAttributes } from './structuredLineAttributes.js';

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
  useAzureMonitor(azureMonitorOptions(connectionString, credentialFrom(env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING)));
  registerInstrumentations({ instrumentations: [new AzureFunctionsInstrumentation()] });
  started = true;
  return true;
}

/**
 * Outgoing HTTP (Cosmos DB) as dependencies. The worker serves no HTTP in Azure (requests reach it
 * over gRPC, as invocations): an incoming request is a local host's, never the app's.
 */
const outgoingHttpOnly = { enabled: true, ignoreIncomingRequestHook: () => true };

/** The distro's options: the exporter, no sampling of any kind, structured lines as custom dimensions. */
export function azureMonitorOptions(connectionString: string, credential: TokenCredential | undefined): AzureMonitorOpenTelemetryOptions {
  return {
    azureMonitorExporterOptions: { connectionString, ...(credential ? { credential } : {}) },
    samplingRatio: 1,
    // The distro's default is rate-limited sampling (5 traces a second): off, so no line is ever dropped.
    tracesPerSecond: 0,
    enableTraceBasedSamplingForLogs: false,
    enableLiveMetrics: false,
    enableAutoCollectPerformance: false,
    logRecordProcessors: [new StructuredLineAttributes()],
    instrumentationOptions: { azureSdk: { enabled: true }, http: outgoingHttpOnly },
  };
}

/**
 * Sends what is queued (metrics are otherwise exported once a minute): before a process ends. The
 * providers are process-wide (the OpenTelemetry API's globals), so this works from any copy of
 * this module, the compiled app's or the sources'.
 */
export async function flushTelemetry(env: Readonly<Record<string, string | undefined>> = process.env): Promise<void> {
  if (env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim()) await flushAzureMonitor();
}

export async function stopAzureMonitor(): Promise<void> {
  await shutdownAzureMonitor();
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
    throw new ConfigurationError([{ setting: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING', problem: 'must be Authorization=AAD, with ClientId=<client id> for a user-assigned identity' }]);
  }
  const clientId = fields.get('clientid');
  return clientId ? new ManagedIdentityCredential({ clientId }) : new ManagedIdentityCredential();
}
