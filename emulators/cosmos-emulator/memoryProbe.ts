// Measures what the Cosmos DB stand-in keeps across containers that are created, filled and deleted:
// the benchmark's and the test suite's pattern. Run with `node --expose-gc --import tsx`; prints one
// JSON line with the heap after a few rounds and after all of them.
import { CosmosClient } from '@azure/cosmos';
import { Agent } from 'node:https';
import { purgeAllExpired, timeToLiveBookkeeping } from './timeToLive.js';
import { startCosmosStandIn } from './cosmosStandIn.js';

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const rounds = Number(process.argv[2] ?? 30);
  const standIn = await startCosmosStandIn({ port: 0 });
  const client = new CosmosClient({
    endpoint: standIn.endpoint,
    key: standIn.key,
    agent: new Agent({ rejectUnauthorized: false, keepAlive: true }),
    connectionPolicy: { enableEndpointDiscovery: false },
  });
  const { database } = await client.databases.createIfNotExists({ id: 'probe' });
  const heap: number[] = [];
  const padding = 'x'.repeat(10_000);
  for (let round = 1; round <= rounds; round += 1) {
    const { container } = await database.containers.create({ id: `c-${round}`, partitionKey: { paths: ['/pk'] }, defaultTtl: -1 });
    for (let i = 0; i < 300; i += 1) await container.items.create({ id: `d-${i}`, pk: `p-${i % 10}`, ttl: 3600, padding });
    for (let i = 0; i < 5; i += 1) await container.item('d-0', 'p-0').replace({ id: 'd-0', pk: 'p-0', ttl: 3600, padding, i });
    await container.delete();
    purgeAllExpired();
    gc();
    heap.push(process.memoryUsage().heapUsed);
  }
  client.dispose();
  await standIn.close();
  console.log(JSON.stringify({ rounds, heapAfter5: heap[4], heapAfterAll: heap[heap.length - 1], bookkeeping: timeToLiveBookkeeping() }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
