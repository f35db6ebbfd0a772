// Where the bench runs: the Cosmos stand-in in this process (request units from the published model),
// or a real account when COSMOS_ENDPOINT is set (request units from its x-ms-request-charge headers).
import { randomUUID } from 'node:crypto';
import { CosmosClient } from '@azure/cosmos';
import type { Container, CosmosClientOptions, Database, PluginConfig } from '@azure/cosmos';
import { DefaultAzureCredential } from '@azure/identity';
import { startCosmosStandIn } from '../emulators/cosmos-emulator/cosmosStandIn.js';
import { RequestChargeRecorder } from '../dev/store/requestChargeRecorder.js';
import { createCosmosClient } from '../src/cosmos/index.js';
import { requiredIndexedPaths } from '../src/doctor/index.js';
import type { ChargeSource } from './costTable.js';

export interface BenchAccount {
  readonly source: ChargeSource;
  readonly label: string;
  readonly charges: RequestChargeRecorder;
  /** A container shaped as infra/modules/cosmos.bicep makes it: /orderId, TTL on, the narrow indexing policy. */
  createContainer(id: string): Promise<Container>;
  close(): Promise<void>;
}

export async function openBenchAccount(env: Readonly<Record<string, string | undefined>>): Promise<BenchAccount> {
  const charges = new RequestChargeRecorder();
  const endpoint = env.COSMOS_ENDPOINT;
  if (endpoint) {
    const auth = env.COSMOS_KEY ? { key: env.COSMOS_KEY } : { aadCredentials: new DefaultAzureCredential() };
    // `plugins` is the SDK's per-request hook; its options type does not list it.
    const options: CosmosClientOptions & { plugins: PluginConfig[] } = { endpoint, ...auth, plugins: [charges.plugin] };
    const client = new CosmosClient(options);
    return accountOn(client, charges, 'measured', `${new URL(endpoint).host}, a database of its own, deleted after the run`, async () => undefined);
  }
  const standIn = await startCosmosStandIn({ port: 0 });
  const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
  return accountOn(client, charges, 'model', 'the Cosmos stand-in in this process', () => standIn.close());
}

async function accountOn(
  client: CosmosClient,
  charges: RequestChargeRecorder,
  source: ChargeSource,
  label: string,
  closeServer: () => Promise<void>,
): Promise<BenchAccount> {
  const { database } = await client.databases.createIfNotExists({ id: `bench-${randomUUID().slice(0, 8)}` });
  return {
    source,
    label,
    charges,
    createContainer: (id) => createOrdersContainer(database, id),
    close: async () => {
      await database.delete().catch(() => undefined);
      client.dispose();
      await closeServer();
    },
  };
}

async function createOrdersContainer(database: Database, id: string): Promise<Container> {
  const { container } = await database.containers.createIfNotExists({
    id,
    partitionKey: { paths: ['/orderId'] },
    defaultTtl: -1,
    indexingPolicy: {
      indexingMode: 'consistent',
      automatic: true,
      includedPaths: requiredIndexedPaths.map((path) => ({ path })),
      excludedPaths: [{ path: '/*' }],
    },
  });
  return container;
}
