import { randomUUID } from 'node:crypto';
import { ChangeFeedStartFrom, StatusCodes } from '@azure/cosmos';
import type { ChangeFeedIteratorOptions, Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCosmosClient } from '../../../src/cosmos/index.js';
import { cosmosTargets } from './cosmosTargets.js';

const targets = cosmosTargets('Cosmos DB change feed contract');

type Doc = { id: string; orderId: string; v?: number; _lsn?: number };

/** Reads pages until the feed answers 304, as a processor polls: the documents, and the token to go on from. */
async function drain(container: Container, options: ChangeFeedIteratorOptions): Promise<{ docs: Doc[]; continuation: string; pages: number }> {
  const iterator = container.items.getChangeFeedIterator<Doc>(options);
  const docs: Doc[] = [];
  let pages = 0;
  for (;;) {
    const page = await iterator.readNext();
    if (page.statusCode === StatusCodes.NotModified) return { docs, continuation: page.continuationToken, pages };
    pages += 1;
    docs.push(...page.result);
  }
}

// Latest-version mode, which the Functions host's Cosmos DB trigger reads (through the .NET change feed processor).
describe.each(targets)('Cosmos DB change feed contract: $name', (target) => {
  let client: CosmosClient;
  let container: Container;
  const databaseId = `feed-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    client = createCosmosClient({ endpoint: target.endpoint(), key: target.key() });
    await client.databases.createIfNotExists({ id: databaseId });
    ({ container } = await client.database(databaseId).containers.create({ id: `c-${randomUUID()}`, partitionKey: { paths: ['/orderId'] }, defaultTtl: -1 }));
  });
  afterAll(async () => {
    await client.database(databaseId).delete();
    client.dispose();
  });

  it('lists every document from the beginning, in write order, each once at its last version, with an _lsn', async () => {
    await container.items.create({ id: 'a', orderId: 'o1', v: 1 });
    await container.items.create({ id: 'b', orderId: 'o2', v: 1 });
    await container.item('a', 'o1').replace({ id: 'a', orderId: 'o1', v: 2 });
    const { docs } = await drain(container, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    expect(docs.map((d) => [d.id, d.v])).toEqual([
      ['b', 1],
      ['a', 2],
    ]);
    expect(docs.every((d) => typeof d._lsn === 'number')).toBe(true);
  });

  it('goes on from a continuation token with only what changed since, and answers 304 when nothing did', async () => {
    const first = await drain(container, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const idle = await drain(container, { changeFeedStartFrom: ChangeFeedStartFrom.Continuation(first.continuation) });
    expect(idle.docs).toEqual([]);
    await container.items.create({ id: 'c', orderId: 'o1', v: 1 });
    const next = await drain(container, { changeFeedStartFrom: ChangeFeedStartFrom.Continuation(first.continuation) });
    expect(next.docs.map((d) => d.id)).toEqual(['c']);
  });

  it('starts from now with nothing of the past', async () => {
    const fromNow = container.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Now() });
    const empty = await fromNow.readNext();
    expect(empty.statusCode).toBe(StatusCodes.NotModified);
    await container.items.create({ id: 'after-now', orderId: 'o3' });
    const page = await fromNow.readNext();
    expect(page.result.map((d) => d.id)).toEqual(['after-now']);
  });

  it('starts from a point in time with what was written at or after it', async () => {
    const { container: timed } = await client.database(databaseId).containers.create({ id: `t-${randomUUID()}`, partitionKey: { paths: ['/orderId'] } });
    await timed.items.create({ id: 'old', orderId: 'o1' });
    await new Promise((resolve) => setTimeout(resolve, 2100)); // _ts has whole seconds
    const boundary = new Date();
    await timed.items.create({ id: 'new', orderId: 'o1' });
    const { docs } = await drain(timed, { changeFeedStartFrom: ChangeFeedStartFrom.Time(boundary) });
    expect(docs.map((d) => d.id)).toEqual(['new']);
  });

  it('reads one partition key alone', async () => {
    const { docs } = await drain(container, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning('o1') });
    expect(docs.map((d) => d.id).sort()).toEqual(['a', 'c']);
    expect(docs.every((d) => d.orderId === 'o1')).toBe(true);
  });

  it('reads by feed range, the ranges together covering every document', async () => {
    const ranges = await container.getFeedRanges();
    const perRange = await Promise.all(ranges.map((range) => drain(container, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) })));
    const ids = perRange.flatMap((r) => r.docs.map((d) => d.id)).sort();
    expect(ids).toEqual(['a', 'after-now', 'b', 'c']);
  });

  it('pages by maxItemCount and never splits a transactional batch across pages', async () => {
    const { container: batched } = await client.database(databaseId).containers.create({ id: `b-${randomUUID()}`, partitionKey: { paths: ['/orderId'] } });
    for (const id of ['s1', 's2', 's3']) await batched.items.create({ id, orderId: 'o9' });
    await batched.items.batch(
      [0, 1, 2].map((i) => ({ operationType: 'Create' as const, resourceBody: { id: `batch-${i}`, orderId: 'o9' } })),
      'o9',
    );
    const iterator = batched.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 2 });
    const pages: string[][] = [];
    for (let page = await iterator.readNext(); page.statusCode !== StatusCodes.NotModified; page = await iterator.readNext())
      pages.push(page.result.map((d) => d.id));
    expect(pages[0]).toEqual(['s1', 's2']);
    expect(pages.flat()).toEqual(['s1', 's2', 's3', 'batch-0', 'batch-1', 'batch-2']);
    expect(pages.filter((ids) => ids.some((id) => id.startsWith('batch-')))).toHaveLength(1);
  });

  it('leaves no trace of a failed transactional batch', async () => {
    const { container: failing } = await client.database(databaseId).containers.create({ id: `f-${randomUUID()}`, partitionKey: { paths: ['/orderId'] } });
    await failing.items.create({ id: 'taken', orderId: 'o1' });
    const before = await drain(failing, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const response = await failing.items.batch(
      [
        { operationType: 'Create', resourceBody: { id: 'fresh', orderId: 'o1' } },
        { operationType: 'Create', resourceBody: { id: 'taken', orderId: 'o1' } },
      ],
      'o1',
    );
    expect(response.code).toBe(207);
    const after = await drain(failing, { changeFeedStartFrom: ChangeFeedStartFrom.Continuation(before.continuation) });
    expect(after.docs).toEqual([]);
  });

  it('does not list deleted documents (latest-version mode)', async () => {
    const { container: deleting } = await client.database(databaseId).containers.create({ id: `d-${randomUUID()}`, partitionKey: { paths: ['/orderId'] } });
    await deleting.items.create({ id: 'gone', orderId: 'o1' });
    await deleting.items.create({ id: 'kept', orderId: 'o1' });
    await deleting.item('gone', 'o1').delete();
    const { docs } = await drain(deleting, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    expect(docs.map((d) => d.id)).toEqual(['kept']);
  });
});
