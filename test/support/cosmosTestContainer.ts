import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { inject } from 'vitest';
import { createCosmosClient } from '../../src/cosmos/index.js';

/** The SDK client the app would build for a loopback endpoint, pointed at this run's stand-in. */
export function testCosmosClient(): CosmosClient {
  return createCosmosClient({ endpoint: inject('cosmosEndpoint'), key: inject('cosmosKey') });
}

/**
 * A fresh orders container shaped as the Bicep creates it: partition key /orderId, TTL on with no
 * default expiry (-1), so only documents with their own `ttl` expire.
 */
export async function createOrdersContainer(client: CosmosClient, databaseId = process.env.COSMOS_DATABASE ?? 'test'): Promise<Container> {
  const { database } = await client.databases.createIfNotExists({ id: databaseId });
  const { container } = await database.containers.create({
    id: `orders-${randomUUID()}`,
    partitionKey: { paths: ['/orderId'] },
    defaultTtl: -1,
  });
  return container;
}

export async function documentsOf(container: Container, orderId: string): Promise<Record<string, unknown>[]> {
  const { resources } = await container.items
    .query<Record<string, unknown>>({ query: 'SELECT * FROM c WHERE c.orderId = @orderId', parameters: [{ name: '@orderId', value: orderId }] })
    .fetchAll();
  return resources;
}
