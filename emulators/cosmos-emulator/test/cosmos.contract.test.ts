import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCosmosStandIn } from '../cosmosStandIn.js';
import { createCosmosClient } from '../../../src/cosmos/index.js';
import { cosmosTargets } from './cosmosTargets.js';

const targets = cosmosTargets('Cosmos DB contract suite');

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const statusOf = (error: unknown) => (error as { code?: number }).code;

describe.each(targets)('Cosmos DB contract: $name', (target) => {
  let client: CosmosClient;
  let container: Container;
  const databaseId = `contract-${randomUUID().slice(0, 8)}`;

  async function newContainer(options: { defaultTtl?: number } = {}): Promise<Container> {
    const { container: c } = await client
      .database(databaseId)
      .containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] }, ...options });
    return c;
  }

  beforeAll(async () => {
    client = createCosmosClient({ endpoint: target.endpoint(), key: target.key() });
    await client.databases.createIfNotExists({ id: databaseId });
    container = await newContainer({ defaultTtl: -1 });
  });
  afterAll(async () => {
    await client.database(databaseId).delete();
    client.dispose();
  });

  describe('documents', () => {
    it('answers a second create of an id in the same partition with 409, and allows it in another', async () => {
      await container.items.create({ id: 'a', orderId: 'p1' });
      await expect(container.items.create({ id: 'a', orderId: 'p1' })).rejects.toSatisfy((e) => statusOf(e) === 409);
      await expect(container.items.create({ id: 'a', orderId: 'p2' })).resolves.toBeDefined();
    });

    it('answers a replace with a stale etag with 412', async () => {
      const { resource } = await container.items.create({ id: 'etag', orderId: 'p1', v: 1 });
      await container.item('etag', 'p1').replace({ id: 'etag', orderId: 'p1', v: 2 }, { accessCondition: { type: 'IfMatch', condition: resource!._etag } });
      await expect(
        container.item('etag', 'p1').replace({ id: 'etag', orderId: 'p1', v: 3 }, { accessCondition: { type: 'IfMatch', condition: resource!._etag } }),
      ).rejects.toSatisfy((e) => statusOf(e) === 412);
    });

    it('patches a document when its condition holds (names and values as written), and answers 412 when it does not', async () => {
      const pk = randomUUID();
      await container.items.create({ id: 'p', orderId: pk, Status: 'Active', n: 1 });
      const { resource } = await container
        .item('p', pk)
        .patch({ operations: [{ op: 'incr', path: '/n', value: 2 }], condition: "from c where c.Status = 'Active'" });
      expect(resource).toMatchObject({ n: 3 });
      const refused = await container
        .item('p', pk)
        .patch({ operations: [{ op: 'incr', path: '/n', value: 2 }], condition: 'from c where c.n > 10' })
        .catch((e: unknown) => e);
      expect(statusOf(refused)).toBe(412);
      expect((await container.item('p', pk).read()).resource?.n).toBe(3);
    });

    it('keeps the items of a container made without a partition key by their _partitionKey, as the SDK names it', async () => {
      const { container: plain, resource } = await client.database(databaseId).containers.create({ id: `plain-${randomUUID()}` });
      expect(resource?.partitionKey?.paths).toEqual(['/_partitionKey']);
      await plain.items.create({ id: 'a', _partitionKey: 'p1', n: 1 });
      await plain.items.create({ id: 'b', n: 1 });
      expect((await plain.item('a', 'p1').read()).resource?.n).toBe(1);
      expect((await plain.item('a', 'p1').replace({ id: 'a', _partitionKey: 'p1', n: 2 })).resource?.n).toBe(2);
      expect((await plain.item('a', 'p2').read()).statusCode).toBe(404);
      expect((await plain.item('b', undefined).read()).resource?.n).toBe(1);
    });

    it('deletes every item of one partition key and no other (deleteAllItemsForPartitionKey)', async () => {
      const [wa, or] = [randomUUID(), randomUUID()];
      await Promise.all([
        container.items.create({ id: '1', orderId: wa }),
        container.items.create({ id: '2', orderId: wa }),
        container.items.create({ id: '1', orderId: or }),
      ]);
      await container.deleteAllItemsForPartitionKey(wa);
      expect([(await container.item('1', wa).read()).statusCode, (await container.item('2', wa).read()).statusCode]).toEqual([404, 404]);
      expect((await container.item('1', or).read()).resource?.orderId).toBe(or);
    });

    it('reads a missing document as a 404 with no resource', async () => {
      const { resource, statusCode } = await container.item('nothing', 'p1').read();
      expect(resource).toBeUndefined();
      expect(statusCode).toBe(404);
    });
  });

  describe('validation', () => {
    const statusOf = (attempt: Promise<unknown>) =>
      attempt.then(
        () => 'accepted',
        (e: { code?: unknown }) => e.code,
      );

    // Cosmos DB's ttl is a 32-bit number of seconds: "a nonzero positive integer less than or equal to 2147483647, or -1".
    it.each([[0], [-2], [1.5], [null], ['60'], [2_147_483_648]])('refuses an item ttl of %j with 400', async (ttl) => {
      expect(await statusOf(container.items.create({ id: randomUUID(), orderId: 'v', ttl: ttl as number }))).toBe(400);
    });

    it('accepts an item ttl of -1 or a positive whole number up to 2147483647', async () => {
      expect(await statusOf(container.items.create({ id: randomUUID(), orderId: 'v', ttl: -1 }))).toBe('accepted');
      expect(await statusOf(container.items.create({ id: randomUUID(), orderId: 'v', ttl: 2_147_483_647 }))).toBe('accepted');
      expect(await statusOf(container.items.create({ id: randomUUID(), orderId: 'v', ttl: 3600 }))).toBe('accepted');
    });

    it('refuses a container with a defaultTtl of 0 or a partition key path without a leading slash', async () => {
      const database = client.database(databaseId);
      expect(await statusOf(database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] }, defaultTtl: 0 }))).toBe(400);
      expect(await statusOf(database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['orderId'] } }))).toBe(400);
    });

    it("stores a container with the indexing policy Cosmos DB gives it: everything included, _etag excluded after the caller's exclusions", async () => {
      const database = client.database(databaseId);
      const { resource: plain } = await database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] } });
      expect(plain?.indexingPolicy).toMatchObject({
        indexingMode: 'consistent',
        automatic: true,
        includedPaths: [{ path: '/*' }],
        excludedPaths: [{ path: '/"_etag"/?' }],
      });
      const { resource: custom } = await database.containers.create({
        id: `c-${randomUUID()}`,
        partitionKey: { paths: ['/orderId'] },
        indexingPolicy: { includedPaths: [{ path: '/*' }], excludedPaths: [{ path: '/"payload"/*' }] },
      });
      expect(custom?.indexingPolicy?.excludedPaths?.map((p) => p.path)).toEqual(['/"payload"/*', '/"_etag"/?']);
      const { resource: read } = await database.container(custom!.id).read();
      expect(read?.indexingPolicy?.excludedPaths?.map((p) => p.path)).toEqual(['/"payload"/*', '/"_etag"/?']);
    });

    it("refuses a partition key path with a space, a wildcard or a trailing slash, in Cosmos DB's words", async () => {
      const database = client.database(databaseId);
      for (const path of ['/id ds', '/order/*', '/orderId/', '//orderId']) {
        const refused = (await database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: [path] } }).catch((e: unknown) => e)) as {
          code?: number;
          message?: string;
        };
        expect({ path, code: refused.code }).toEqual({ path, code: 400 });
        expect(refused.message).toContain('Partition key paths must contain only valid characters and not contain a trailing slash or wildcard character');
      }
      const nested = await database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/customer/id'] } });
      expect(nested.resource?.partitionKey?.paths).toEqual(['/customer/id']);
    });
  });

  describe('transactional batch', () => {
    it('applies every operation when all succeed', async () => {
      const pk = randomUUID();
      const response = await container.items.batch(
        [
          { operationType: 'Create', resourceBody: { id: 'x', orderId: pk } },
          { operationType: 'Create', resourceBody: { id: 'y', orderId: pk } },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([201, 201]);
    });

    it("takes the batch's partition key for operations that name none: read, replace, delete", async () => {
      const pk = randomUUID();
      const { etag } = await container.items.create({ id: 'r', orderId: pk, n: 1 });
      await container.items.create({ id: 'd', orderId: pk });
      const response = await container.items.batch(
        [
          { operationType: 'Read', id: 'r' },
          { operationType: 'Replace', id: 'r', resourceBody: { id: 'r', orderId: pk, n: 2 }, ifMatch: etag },
          { operationType: 'Delete', id: 'd' },
          { operationType: 'Create', resourceBody: { id: 'c', orderId: pk } },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([200, 200, 204, 201]);
      expect((await container.item('r', pk).read()).resource).toMatchObject({ n: 2 });
      expect((await container.item('d', pk).read()).resource).toBeUndefined();
    });

    it('is atomic: one failure leaves none of the operations written, the cause and 424 for the rest', async () => {
      const pk = randomUUID();
      await container.items.create({ id: 'taken', orderId: pk });
      const response = await container.items.batch(
        [
          { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'first', orderId: pk } },
          { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'taken', orderId: pk } },
          { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'third', orderId: pk } },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([424, 409, 424]);
      expect((await container.item('first', pk).read()).resource).toBeUndefined();
      expect((await container.item('third', pk).read()).resource).toBeUndefined();
    });

    it('applies a patch whose condition holds beside the other operations, names and values compared as written', async () => {
      const pk = randomUUID();
      await container.items.create({ id: 'p', orderId: pk, Status: 'Active' });
      const response = await container.items.batch(
        [
          { operationType: 'Create', resourceBody: { id: 'q', orderId: pk } },
          {
            operationType: 'Patch',
            id: 'p',
            resourceBody: { operations: [{ op: 'add', path: '/good', value: 'great' }], condition: 'from c where NOT IS_DEFINED(c.newImproved)' },
          },
          {
            operationType: 'Patch',
            id: 'p',
            resourceBody: { operations: [{ op: 'set', path: '/Status', value: 'Shipped' }], condition: "from c where c.Status = 'Active'" },
          },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([201, 200, 200]);
      expect((await container.item('p', pk).read()).resource).toMatchObject({ good: 'great', Status: 'Shipped' });
    });

    it('fails the whole batch with 412 when a patch condition does not hold', async () => {
      const pk = randomUUID();
      await container.items.create({ id: 'p', orderId: pk, Status: 'Active' });
      const response = await container.items.batch(
        [
          { operationType: 'Create', resourceBody: { id: 'q', orderId: pk } },
          {
            operationType: 'Patch',
            id: 'p',
            resourceBody: { operations: [{ op: 'set', path: '/Status', value: 'Shipped' }], condition: "from c where c.Status = 'active'" },
          },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([424, 412]);
      expect((await container.item('q', pk).read()).resource).toBeUndefined();
      expect((await container.item('p', pk).read()).resource?.Status).toBe('Active');
    });

    it('refuses an item with an invalid ttl inside a batch with 400, and writes none of the batch', async () => {
      const pk = randomUUID();
      const response = await container.items.batch(
        [
          { operationType: 'Create', resourceBody: { id: 'fine', orderId: pk } },
          { operationType: 'Create', resourceBody: { id: 'bad-ttl', orderId: pk, ttl: -10 } },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([424, 400]);
      expect((await container.item('fine', pk).read()).resource).toBeUndefined();
    });

    it('rolls back a create when a conditional replace in the same batch fails', async () => {
      const pk = randomUUID();
      const { resource } = await container.items.create({ id: 'order', orderId: pk, paid: 0 });
      await container.item('order', pk).replace({ id: 'order', orderId: pk, paid: 5 });
      const response = await container.items.batch(
        [
          { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'marker', orderId: pk } },
          { operationType: 'Replace', partitionKey: pk, id: 'order', resourceBody: { id: 'order', orderId: pk, paid: 10 }, ifMatch: resource!._etag },
        ],
        pk,
      );
      expect(response.result?.map((r) => r.statusCode)).toEqual([424, 412]);
      expect((await container.item('marker', pk).read()).resource).toBeUndefined();
      expect((await container.item('order', pk).read()).resource?.paid).toBe(5);
    });
  });

  describe('bulk', () => {
    it('applies each operation on its own, patch included; an invalid ttl is 400 and the others go on', async () => {
      const pk = randomUUID();
      await container.items.create({ id: 'p', orderId: pk, n: 1 });
      const results = await container.items.bulk([
        { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'bad-ttl', orderId: pk, ttl: -10 } },
        { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'fine', orderId: pk } },
        { operationType: 'Patch', partitionKey: pk, id: 'p', resourceBody: { operations: [{ op: 'incr', path: '/n', value: 4 }] } },
      ]);
      expect(results.map((r) => r.statusCode)).toEqual([400, 201, 200]);
      expect((await container.item('fine', pk).read()).resource?.id).toBe('fine');
      expect((await container.item('p', pk).read()).resource?.n).toBe(5);
    });

    it('answers 424 for what follows a failure when told not to go on', async () => {
      const pk = randomUUID();
      const results = await container.items.bulk(
        [
          { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'bad-ttl', orderId: pk, ttl: 0 } },
          { operationType: 'Create', partitionKey: pk, resourceBody: { id: 'after', orderId: pk } },
        ],
        { continueOnError: false },
      );
      expect(results.map((r) => r.statusCode)).toEqual([400, 424]);
      expect((await container.item('after', pk).read()).resource).toBeUndefined();
    });
  });

  describe('offers (provisioned throughput; a serverless account has none)', () => {
    it('gives a container its own offer: 400 RU/s by default, what it asked for, or autoscale; a replace changes it; a delete removes it', async () => {
      const database = client.database(databaseId);
      const { container: plain, resource: plainDef } = await database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] } });
      const { resource: plainOffer } = await plain.readOffer();
      if (!plainOffer) {
        // A serverless account (this project's): no offers, and a container that asks for throughput is refused.
        const refused = await database.containers
          .create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] }, throughput: 500 })
          .catch((e: unknown) => e);
        expect(statusOf(refused)).toBe(400);
        return;
      }
      expect(plainOffer).toMatchObject({ offerResourceId: plainDef!._rid, resource: plainDef!._self, content: { offerThroughput: 400 } });
      const { container: manual } = await database.containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] }, throughput: 500 });
      const { resource: manualOffer, offer } = await manual.readOffer();
      expect(manualOffer?.content?.offerThroughput).toBe(500);
      await offer!.replace({ ...manualOffer!, content: { offerThroughput: 800, offerIsRUPerMinuteThroughputEnabled: false } });
      expect((await manual.readOffer()).resource?.content?.offerThroughput).toBe(800);
      const { container: autoscale } = await database.containers.create({
        id: `c-${randomUUID()}`,
        partitionKey: { paths: ['/orderId'] },
        maxThroughput: 4000,
      });
      expect((await autoscale.readOffer()).resource?.content?.offerAutopilotSettings?.maxThroughput).toBe(4000);
      const offerId = manualOffer!.id;
      await manual.delete();
      const { resources: remaining } = await client.offers.readAll().fetchAll();
      expect(remaining.map((o) => o.id)).not.toContain(offerId);
    });

    it('refuses a throughput under 400 RU/s or off its steps of 100, and creates no container', async () => {
      const database = client.database(databaseId);
      const id = `c-${randomUUID()}`;
      const refused = (await database.containers.create({ id, partitionKey: { paths: ['/orderId'] }, throughput: 350 }).catch((e: unknown) => e)) as {
        code?: number;
      };
      expect(refused.code).toBe(400);
      expect(
        statusOf(
          await database
            .container(id)
            .read()
            .catch((e: unknown) => e),
        ),
      ).toBe(404);
    });
  });

  describe('time to live', () => {
    it('hides a document at once when its ttl has passed, in reads and queries, and frees its id', async () => {
      const pk = randomUUID();
      // ttl counts from _ts, in whole seconds: 1 s could already be over at the first read.
      await container.items.create({ id: 'marker', orderId: pk, ttl: 2 });
      await container.items.create({ id: 'order', orderId: pk });
      expect((await container.item('marker', pk).read()).resource).toBeDefined();
      await wait(3_100);
      expect((await container.item('marker', pk).read()).resource).toBeUndefined();
      const { resources } = await container.items
        .query({ query: 'SELECT c.id FROM c WHERE c.orderId = @pk', parameters: [{ name: '@pk', value: pk }] })
        .fetchAll();
      expect(resources.map((r) => r.id)).toEqual(['order']);
      await expect(container.items.create({ id: 'marker', orderId: pk })).resolves.toBeDefined();
    }, 15_000);

    it('keeps documents with a ttl when the container has TTL off', async () => {
      const noTtl = await newContainer();
      await noTtl.items.create({ id: 'kept', orderId: 'p', ttl: 1 });
      await wait(2_100);
      expect((await noTtl.item('kept', 'p').read()).resource).toBeDefined();
    }, 15_000);
  });

  describe('queries', () => {
    it('see only the partition named in the partitionKey option, aggregates included', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      await container.items.create({ id: '1', orderId: a, kind: 'scoped' });
      await container.items.create({ id: '2', orderId: a, kind: 'scoped' });
      await container.items.create({ id: '3', orderId: b, kind: 'scoped' });
      const query = { query: "SELECT c.id FROM c WHERE c.kind = 'scoped'" };
      const scoped = await container.items.query(query, { partitionKey: a }).fetchAll();
      expect(scoped.resources.map((r) => r.id).sort()).toEqual(['1', '2']);
      const count = await container.items.query("SELECT VALUE COUNT(1) FROM c WHERE c.kind = 'scoped'", { partitionKey: b }).fetchAll();
      expect(count.resources).toEqual([1]);
      const all = await container.items.query(query).fetchAll();
      expect(all.resources.length).toBeGreaterThanOrEqual(3);
    });
  });
});

describe('the stand-in', () => {
  it('listens on https://127.0.0.1:8081 by default, like the official emulator', async () => {
    const standIn = await startCosmosStandIn();
    try {
      expect(standIn.endpoint).toBe('https://127.0.0.1:8081/');
      const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
      expect((await client.getDatabaseAccount()).resource).toBeDefined();
      client.dispose();
    } finally {
      await standIn.close();
    }
  });

  describe('ambiguous writes: applied, then the answer lost', () => {
    async function withStandIn(
      random: () => number,
      run: (standIn: Awaited<ReturnType<typeof startCosmosStandIn>>, container: Container) => Promise<void>,
    ): Promise<void> {
      const standIn = await startCosmosStandIn({ port: 0, random });
      const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
      try {
        const { database } = await client.databases.createIfNotExists({ id: 'ambiguous' });
        const { container } = await database.containers.createIfNotExists({ id: 'c', partitionKey: { paths: ['/pk'] } });
        await run(standIn, container);
      } finally {
        client.dispose();
        await standIn.close();
      }
    }
    const noRetry = { retryOptions: { maxRetryAttemptCount: 0 } } as never;

    for (const statusCode of [408, 503, 0]) {
      it(`a create answered ${statusCode === 0 ? 'by a dropped connection' : statusCode} was made all the same: read back, and created again it is a 409`, async () => {
        await withStandIn(Math.random, async (standIn, container) => {
          standIn.injectFault({ statusCode, times: 1, kinds: ['create'], afterApplying: true });
          const outcome = await container.items.create({ id: 'a-1', pk: 'a' }, noRetry).then(
            () => 'answered',
            (e: { code?: unknown }) => e.code ?? 'failed',
          );
          expect(outcome).not.toBe('answered');
          if (statusCode !== 0) expect(outcome).toBe(statusCode);
          expect((await container.item('a-1', 'a').read()).statusCode).toBe(200);
          await expect(container.items.create({ id: 'a-1', pk: 'a' })).rejects.toMatchObject({ code: 409 });
        });
      });
    }

    it('a transactional batch answered 503 was committed whole (the SDK reports a batch request error)', async () => {
      await withStandIn(Math.random, async (standIn, container) => {
        standIn.injectFault({ statusCode: 503, times: 1, kinds: ['batch'], afterApplying: true });
        const ops = [
          { operationType: 'Create', resourceBody: { id: 'b-1', pk: 'b' } },
          { operationType: 'Create', resourceBody: { id: 'b-2', pk: 'b' } },
        ] as never;
        await expect(container.items.batch(ops, 'b')).rejects.toThrow(/Batch request error/);
        expect((await container.item('b-1', 'b').read()).statusCode).toBe(200);
        expect((await container.item('b-2', 'b').read()).statusCode).toBe(200);
      });
    });

    it('hits only the kinds it names, at its rate: reads are answered, and a rate of 0.5 hits the writes its random picks', async () => {
      const draws = [0.9, 0.1, 0.6, 0.2];
      await withStandIn(
        () => draws.shift() ?? 1,
        async (standIn, container) => {
          standIn.injectFault({ statusCode: 503, times: 100, kinds: ['create', 'replace'], rate: 0.5, afterApplying: true });
          const results: unknown[] = [];
          for (const id of ['r-1', 'r-2', 'r-3', 'r-4'])
            results.push(
              await container.items.create({ id, pk: 'r' }, noRetry).then(
                () => 201,
                (e: { code?: unknown }) => e.code,
              ),
            );
          expect(results).toEqual([201, 503, 201, 503]);
          expect((await container.item('r-2', 'r').read()).statusCode).toBe(200);
          expect((await container.items.query('SELECT * FROM c', { partitionKey: 'r' }).fetchAll()).resources).toHaveLength(4);
        },
      );
    });
  });

  it('plays an outage of a set length: every matching request fails until the time is up, then all succeed', async () => {
    const standIn = await startCosmosStandIn({ port: 0 });
    const client = createCosmosClient({ endpoint: standIn.endpoint, key: standIn.key });
    try {
      const { database } = await client.databases.createIfNotExists({ id: 'outage' });
      const { container } = await database.containers.createIfNotExists({ id: 'c', partitionKey: { paths: ['/pk'] } });
      await container.items.create({ id: '1', pk: 'a' });
      standIn.injectFault({ statusCode: 503, times: 1_000_000, forMs: 600, urlIncludes: '/colls/c/' });
      const failures: unknown[] = [];
      for (let i = 0; i < 3; i += 1)
        failures.push(
          await container
            .item('1', 'a')
            .read({ retryOptions: { maxRetryAttemptCount: 0 } } as never)
            .then(
              () => 200,
              (e: { code?: unknown }) => e.code,
            ),
        );
      expect(failures).toEqual([503, 503, 503]);
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect((await container.item('1', 'a').read()).statusCode).toBe(200);
    } finally {
      client.dispose();
      await standIn.close();
    }
  });
});
