import { Agent } from 'node:https';
import { CosmosClient } from '@azure/cosmos';
import type { Container } from '@azure/cosmos';
import { DefaultAzureCredential } from '@azure/identity';

/**
 * The trigger's `connection` names a setting: a connection string (`AccountEndpoint=...;AccountKey=...;`)
 * locally, or `<name>__accountEndpoint` for an identity connection in Azure.
 */
export function cosmosClientFor(connection: string, settings: Readonly<Record<string, string>>): CosmosClient {
  const connectionString = settings[connection];
  if (connectionString) {
    const parts = Object.fromEntries(
      connectionString
        .split(';')
        .filter((p) => p.includes('='))
        .map((p) => [p.slice(0, p.indexOf('=')).trim().toLowerCase(), p.slice(p.indexOf('=') + 1).trim()]),
    );
    if (!parts.accountendpoint) throw new Error(`app setting ${connection} is not a Cosmos DB connection string: it has no AccountEndpoint=`);
    return createCosmosClient({ endpoint: parts.accountendpoint, key: parts.accountkey });
  }
  const endpoint = settings[`${connection}__accountEndpoint`];
  if (endpoint) return createCosmosClient({ endpoint });
  throw new Error(`app setting ${connection} (or ${connection}__accountEndpoint) is not set`);
}

/**
 * A key, or the host's managed identity. On a loopback endpoint (an emulator or the stand-in, whose
 * certificate is self-signed) the certificate is not checked and the client stays on the given
 * endpoint: where the real host's .NET client would refuse that certificate, this host lets the
 * local stack run its Cosmos DB triggers.
 */
function createCosmosClient(options: { readonly endpoint: string; readonly key?: string }): CosmosClient {
  const local = isLoopback(options.endpoint);
  return new CosmosClient({
    endpoint: options.endpoint,
    ...(options.key ? { key: options.key } : { aadCredentials: new DefaultAzureCredential() }),
    ...(local ? { connectionPolicy: { enableEndpointDiscovery: false }, agent: new Agent({ keepAlive: true, rejectUnauthorized: false }) } : {}),
  });
}

function isLoopback(endpoint: string): boolean {
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The leases container, made when the trigger says so; else it must exist, partitioned by /id, as the host requires. */
export async function openLeaseContainer(
  client: CosmosClient,
  databaseName: string,
  containerName: string,
  create: boolean,
  functionName: string,
): Promise<Container> {
  if (create) {
    const { database } = await client.databases.createIfNotExists({ id: databaseName });
    const { container } = await database.containers.createIfNotExists({ id: containerName, partitionKey: { paths: ['/id'] } });
    return container;
  }
  const container = client.database(databaseName).container(containerName);
  await mustExist(
    container,
    `${functionName}: the lease container ${databaseName}/${containerName} does not exist (create it, or set createLeaseContainerIfNotExists)`,
  );
  const { resource } = await container.read();
  const paths = resource?.partitionKey?.paths ?? [];
  if (paths.length !== 1 || paths[0] !== '/id')
    throw new Error(`${functionName}: the lease container ${containerName} must be partitioned by /id, not ${paths.join(', ')}`);
  return container;
}

export async function mustExist(container: Container, message: string): Promise<void> {
  try {
    await container.read();
  } catch (error) {
    if ((error as { code?: number }).code === 404) throw new Error(message);
    throw error;
  }
}
