import { DefaultAzureCredential } from '@azure/identity';
import { ServiceBusClient } from '@azure/service-bus';
import type { RetryOptions } from '@azure/service-bus';

/** How the tool was told to reach Service Bus: a connection string or a namespace, never both. */
export interface ServiceBusConnectionOptions {
  readonly connectionString?: string;
  readonly namespace?: string;
}

export function serviceBusClientOf(options: ServiceBusConnectionOptions, retryOptions: RetryOptions): ServiceBusClient {
  if (options.connectionString && options.namespace) throw new Error('give --connection-string or --namespace, not both');
  if (options.connectionString) return new ServiceBusClient(options.connectionString, { retryOptions });
  if (options.namespace) return new ServiceBusClient(options.namespace, new DefaultAzureCredential(), { retryOptions });
  throw new Error('give --namespace <fqdn> (with az login / managed identity) or --connection-string (or SERVICEBUS_CONNECTION_STRING)');
}

/** A command's client: the SDK's own retries stay inside --timeout, so no single call hangs for a minute. */
export function commandClientOf(options: ServiceBusConnectionOptions, timeoutMs: number): ServiceBusClient {
  return serviceBusClientOf(options, { timeoutInMs: timeoutMs, maxRetries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 2_000 });
}

/** How the namespace was named, for error messages: `--namespace`, or the connection string's Endpoint. */
export function namespaceOf(options: ServiceBusConnectionOptions): string {
  if (options.namespace) return options.namespace;
  return endpointHostOf(options.connectionString) ?? '(from the connection string)';
}

/** The host (and port) a connection string's `Endpoint=sb://` names: what the tool may show of it, never its key. */
export function endpointHostOf(connectionString: string | undefined): string | undefined {
  return /Endpoint=sb:\/\/([^;/]+)/i.exec(connectionString ?? '')?.[1];
}
