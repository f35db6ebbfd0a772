// The Azure Monitor distro and the Functions instrumentation: about 0.6 s to load, so loaded only
// when telemetry is on (azureMonitor.ts requires this module lazily).
import type { TokenCredential } from '@azure/identity';
import { AzureFunctionsInstrumentation } from '@azure/functions-opentelemetry-instrumentation';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { flushAzureMonitor, shutdownAzureMonitor, useAzureMonitor } from 'applicationinsights';
import type { AzureMonitorOpenTelemetryOptions } from 'applicationinsights';
import { StructuredLineAttributes } from './structuredLineAttributes.js';

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

export function startDistro(connectionString: string, credential: TokenCredential | undefined): void {
  useAzureMonitor(azureMonitorOptions(connectionString, credential));
  registerInstrumentations({ instrumentations: [new AzureFunctionsInstrumentation()] });
}

export { flushAzureMonitor, shutdownAzureMonitor };
