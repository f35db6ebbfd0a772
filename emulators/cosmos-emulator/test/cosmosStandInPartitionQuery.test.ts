import type { Container, CosmosClient, OperationInput } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCosmosStandIn } from '../cosmosStandIn.js';
import type { CosmosStandIn } from '../cosmosStandIn.js';
import { createCosmosClient } from '../../../src/cosmos/index.js';

// The stand-in answers a partition-scoped query from a per-partition index of its documents (kept
// by every write), not from a scan of the container: these hold it to the partition's exact content.
describe('the Cosmos DB stand-in, a query scoped to one partition', () => {
  let standIn: CosmosStandIn;
  let client: CosmosClient;
  let container: Container;
  beforeAll(async () => {
    standIn = await startCosmosStandIn({ port: 0 });
    client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
    const { database } = await client.databases.createIfNotExists({ id: 'scoped' });
    ({ container } = await database.containers.create({ id: 'orders', partitionKey: { paths: ['/orderId'] }, defaultTtl: -1 }));
  });
  afterAll(async () => {
    client.dispose();
    await standIn.close();
  });

  const idsIn = async (orderId: string) =>
    (await container.items.query<{ id: string; n?: number }>('SELECT * FROM c', { partitionKey: orderId }).fetchAll()).resources
      .map((d) => `${d.id}${d.n === undefined ? '' : `:${d.n}`}`)
      .sort();

  it('sees what was written before its first query and after, a replaced document as replaced, no deleted document and nothing of other partitions', async () => {
    await container.items.create({ id: 'a', orderId: 'o-1' });
    await container.items.create({ id: 'b', orderId: 'o-1' });
    await container.items.create({ id: 'a', orderId: 'o-2' });
    expect(await idsIn('o-1')).toEqual(['a', 'b']);
    await container.items.create({ id: 'c', orderId: 'o-1' });
    await container.item('a', 'o-1').replace({ id: 'a', orderId: 'o-1', n: 2 });
    await container.item('b', 'o-1').delete();
    expect(await idsIn('o-1')).toEqual(['a:2', 'c']);
    expect(await idsIn('o-2')).toEqual(['a']);
    expect(await idsIn('o-3')).toEqual([]);
  });

  it('keeps a committed batch and none of a rolled-back one, whose rid may be reused in another partition', async () => {
    const create = (id: string, orderId: string): OperationInput => ({ operationType: 'Create', resourceBody: { id, orderId } });
    await container.items.batch([create('x', 'o-4'), create('y', 'o-4')], 'o-4');
    const failed = await container.items.batch([create('z', 'o-5'), create('z', 'o-5')], 'o-5');
    expect(failed.result?.[1]?.statusCode).toBe(409);
    await container.items.create({ id: 'w', orderId: 'o-6' });
    expect(await idsIn('o-4')).toEqual(['x', 'y']);
    expect(await idsIn('o-5')).toEqual([]);
    expect(await idsIn('o-6')).toEqual(['w']);
  });
});
