import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { CosmosClient } from '@azure/cosmos';
import type { CosmosClientOptions } from '@azure/cosmos';
import { DefaultAzureCredential } from '@azure/identity';
import type { TokenCredential } from '@azure/identity';

export interface CosmosConnectionOptions {
  readonly endpoint: string;
  /** Account key; without it the client authenticates with Entra ID (`DefaultAzureCredential`). */
  readonly key?: string;
  /** The Entra ID credential when there is no key; `DefaultAzureCredential` unless given. */
  readonly credential?: TokenCredential;
  /** PEM file of a CA to trust for this endpoint only (the Cosmos emulator's exported certificate). */
  readonly caCertificatePath?: string;
  /** Identifies the client in Cosmos diagnostics. */
  readonly userAgentSuffix?: string;
}

/**
 * Builds the one Cosmos client of the process. Certificate checks are relaxed for a loopback endpoint
 * (the emulator and the local stand-in use self-signed certificates) through this client's own
 * HTTPS agent, never through NODE_TLS_REJECT_UNAUTHORIZED, so every other connection stays verified.
 */
export function createCosmosClient(options: CosmosConnectionOptions): CosmosClient {
  const local = isLoopbackEndpoint(options.endpoint);
  const clientOptions: CosmosClientOptions = {
    endpoint: options.endpoint,
    ...(options.key ? { key: options.key } : { aadCredentials: options.credential ?? new DefaultAzureCredential() }),
    userAgentSuffix: options.userAgentSuffix ?? 'idempotent-order-consumer',
    // An emulator advertises addresses that are not reachable from here; stay on the given endpoint.
    ...(local ? { connectionPolicy: { enableEndpointDiscovery: false } } : {}),
  };
  const agent = httpsAgentFor(options, local);
  return new CosmosClient(agent ? { ...clientOptions, agent } : clientOptions);
}

function httpsAgentFor(options: CosmosConnectionOptions, local: boolean): Agent | undefined {
  if (options.caCertificatePath) {
    return new Agent({ keepAlive: true, ca: readFileSync(options.caCertificatePath) });
  }
  if (local) return new Agent({ keepAlive: true, rejectUnauthorized: false });
  return undefined;
}

export function isLoopbackEndpoint(endpoint: string): boolean {
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
