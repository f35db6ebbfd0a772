import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCosmosStandIn } from '../cosmosStandIn.js';
import type { CosmosStandIn } from '../cosmosStandIn.js';
import { purgeAllExpired, timeToLiveBookkeeping } from '../timeToLive.js';
import { createCosmosClient } from '../../../src/cosmos/index.js';

// The stand-in grew to about 800 MiB over repeated benchmark drains: every container it had ever
// tracked for TTL stayed reachable after its deletion, with all its documents.
describe('the Cosmos DB stand-in keeps its memory bounded', () => {
  it('releases a deleted container and its documents: the heap after 30 create-fill-delete rounds is the heap after 5', () => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'emulators/cosmos-emulator/memoryProbe.ts', '30'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const probe = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { heapAfter5: number; heapAfterAll: number; bookkeeping: { collections: number } };
    // Each round writes about 3 MB; kept, 25 more rounds would add about 80 MB (measured: 44 -> 126 MB).
    expect(probe.heapAfterAll - probe.heapAfter5).toBeLessThan(15 * 1024 * 1024);
    expect(probe.bookkeeping.collections).toBe(0);
  }, 260_000);

  describe('a document rewritten many times with a long ttl', () => {
    let standIn: CosmosStandIn;
    beforeAll(async () => {
      standIn = await startCosmosStandIn({ port: 0 });
    });
    afterAll(() => standIn.close());

    it('leaves the expiry bookkeeping proportional to the live documents, not to the writes', async () => {
      const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
      const { database } = await client.databases.createIfNotExists({ id: 'rewrites' });
      const { container } = await database.containers.create({ id: 'hot', partitionKey: { paths: ['/pk'] }, defaultTtl: -1 });
      await container.items.create({ id: 'hot', pk: 'p', ttl: 3600, n: 0 });
      const before = timeToLiveBookkeeping().expiries;
      for (let n = 1; n <= 3000; n += 1) await container.item('hot', 'p').replace({ id: 'hot', pk: 'p', ttl: 3600, n });
      expect(timeToLiveBookkeeping().expiries - before).toBeLessThanOrEqual(1024 + 2);
      expect((await container.item('hot', 'p').read<{ n: number }>()).resource?.n).toBe(3000);
      // The rebuilt bookkeeping kept the latest write's expiry: an hour on, the document is gone.
      expect(purgeAllExpired(Date.now() + 3_601_000)).toBeGreaterThanOrEqual(1);
      expect((await container.item('hot', 'p').read()).resource).toBeUndefined();
      client.dispose();
    }, 120_000);
  });
});
