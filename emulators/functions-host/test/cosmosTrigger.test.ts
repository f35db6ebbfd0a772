import { randomUUID } from 'node:crypto';
import { app } from '@azure/functions';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LeaseLostError, LeaseStore } from '../cosmosLeases.js';
import type { LeaseDocument } from '../cosmosLeases.js';
import { startCosmosTriggerListener } from '../cosmosTriggers.js';
import type { CosmosTriggerListener } from '../cosmosTriggers.js';
import { registeredFunctions } from '../functionsCore.js';
import type { RegisteredFunction } from '../functionsCore.js';
import { retryPolicyOf } from '../retryPolicy.js';
import { testCosmosClient } from '../../../test/support/cosmosTestContainer.js';
import { eventually } from '../../../test/support/waiting.js';

// The local host's Cosmos DB trigger against the stand-in's change feed: what the Functions host
// (through the .NET change feed processor) does with leases, batches and the retry policy.
let client: CosmosClient;
let databaseId: string;
const fast = { feedPollDelayMs: 50, leaseAcquireIntervalMs: 100, leaseRenewIntervalMs: 150, leaseExpirationIntervalMs: 800 };
const batches = new Map<string, string[][]>();
let failing = new Set<string>();

function register(name: string, options: Record<string, unknown>): RegisteredFunction {
  app.cosmosDB(name, {
    connection: 'TestCosmos',
    databaseName: '%TEST_DB%',
    containerName: name,
    leaseContainerName: 'leases',
    handler: async (documents: unknown[]) => {
      const ids = (documents as { id: string }[]).map((d) => d.id);
      batches.set(name, [...(batches.get(name) ?? []), ids]);
      if (ids.some((id) => failing.has(id))) throw new Error(`refusing ${ids.join(',')}`);
    },
    ...options,
  } as never);
  return [...registeredFunctions()].reverse().find((f) => f.metadata.name === name)!;
}

async function monitored(name: string): Promise<Container> {
  const { container } = await client.database(databaseId).containers.create({ id: name, partitionKey: { paths: ['/pk'] } });
  return container;
}

const settings = () => ({ TestCosmos: `AccountEndpoint=${inject('cosmosEndpoint')};AccountKey=${inject('cosmosKey')};`, TEST_DB: databaseId });
const listeners: CosmosTriggerListener[] = [];
async function listen(fn: RegisteredFunction, instanceId: string, onError?: (e: unknown) => void): Promise<CosmosTriggerListener> {
  const trigger = Object.values(fn.metadata.bindings).find((b) => b.type === 'cosmosDBTrigger')!;
  const listener = await startCosmosTriggerListener(fn, trigger, { settings: settings(), instanceId, intervals: fast, onError });
  listeners.push(listener);
  return listener;
}

beforeAll(async () => {
  client = testCosmosClient();
  databaseId = `trigger-${randomUUID().slice(0, 8)}`;
  const { database } = await client.databases.createIfNotExists({ id: databaseId });
  await database.containers.create({ id: 'leases', partitionKey: { paths: ['/id'] } });
});
afterAll(async () => {
  for (const l of listeners) await l.close();
  await client.database(databaseId).delete();
  client.dispose();
});

describe("the local host's Cosmos DB trigger", () => {
  it('starts from the beginning when asked, in batches of at most maxItemsPerInvocation, each document once', async () => {
    const container = await monitored('fromBeginning');
    for (let i = 0; i < 7; i += 1) await container.items.create({ id: `d${i}`, pk: 'p' });
    await listen(register('fromBeginning', { startFromBeginning: true, maxItemsPerInvocation: 3 }), 'a');
    await eventually('all seven', () => (batches.get('fromBeginning') ?? []).flat().length === 7);
    expect(batches.get('fromBeginning')?.map((b) => b.length)).toEqual([3, 3, 1]);
  });

  it('starts from now by default: what was there before the lease is not delivered', async () => {
    const container = await monitored('fromNow');
    await container.items.create({ id: 'before', pk: 'p' });
    await listen(register('fromNow', {}), 'a');
    await container.items.create({ id: 'after', pk: 'p' });
    await eventually('the later document', () => (batches.get('fromNow') ?? []).flat().includes('after'));
    expect((batches.get('fromNow') ?? []).flat()).toEqual(['after']);
  });

  it('retries a failing batch under the retry policy, then checkpoints and moves on as the host does', async () => {
    const container = await monitored('retried');
    failing = new Set(['poison']);
    await listen(register('retried', { startFromBeginning: true, retry: { strategy: 'fixedDelay', maxRetryCount: 2, delayInterval: { seconds: 0 } } }), 'a');
    await container.items.create({ id: 'poison', pk: 'p' });
    await eventually('three attempts', () => (batches.get('retried') ?? []).length === 3);
    await container.items.create({ id: 'next', pk: 'p' });
    await eventually('the next document', () => (batches.get('retried') ?? []).flat().includes('next'));
    expect(batches.get('retried')).toEqual([['poison'], ['poison'], ['poison'], ['next']]);
    failing = new Set();
  });

  it('lets one instance at a time hold the lease; another takes it over from the last checkpoint once it expires', async () => {
    const container = await monitored('shared');
    const fn = register('shared', { startFromBeginning: true });
    const first = await listen(fn, 'first');
    const second = await listen(fn, 'second');
    expect([first.ownedLeases().length, second.ownedLeases().length]).toEqual([1, 0]);
    await container.items.create({ id: 'one', pk: 'p' });
    await eventually('one delivered', () => (batches.get('shared') ?? []).flat().includes('one'));
    // The checkpoint is written after the function returns: a host that dies before it would have
    // 'one' delivered again (at least once), which is not what this test is about.
    await eventually('one checkpointed', async () => {
      const { resources } = await client
        .database(databaseId)
        .container('leases')
        .items.query<{ id: string; ContinuationToken: string | null }>('SELECT * FROM c')
        .fetchAll();
      return resources.some((lease) => lease.id.includes('shared') && lease.ContinuationToken !== null);
    });
    await first.close({ releaseLeases: false });
    await container.items.create({ id: 'two', pk: 'p' });
    await eventually('the second instance took over', () => second.ownedLeases().length === 1, 5000);
    await eventually('two delivered', () => (batches.get('shared') ?? []).flat().includes('two'));
    expect((batches.get('shared') ?? []).flat()).toEqual(['one', 'two']);
  });

  it('refuses to start without its lease container, naming it', async () => {
    await monitored('noLeases');
    const fn = register('noLeases', { leaseContainerName: 'missing-leases' });
    await expect(listen(fn, 'a')).rejects.toThrow(/lease container .*missing-leases does not exist \(create it, or set createLeaseContainerIfNotExists\)/);
  });

  it('refuses a connection setting that is not a Cosmos DB connection string', async () => {
    const fn = register('badConnection', {});
    const trigger = Object.values(fn.metadata.bindings).find((b) => b.type === 'cosmosDBTrigger')!;
    await expect(
      startCosmosTriggerListener(fn, trigger, { settings: { TestCosmos: 'Endpoint=sb://x', TEST_DB: databaseId }, instanceId: 'a' }),
    ).rejects.toThrow('app setting TestCosmos is not a Cosmos DB connection string: it has no AccountEndpoint=');
  });
});

describe('leases', () => {
  it('refuse a checkpoint from an owner whose lease was taken over', async () => {
    const leases = client.database(databaseId).container('leases');
    let clock = 1_000_000;
    const range = { minInclusive: '', maxExclusive: 'FF' } as never;
    const old = new LeaseStore({ leases, prefix: 'takeover', owner: 'old', expirationMs: 1000, now: () => clock });
    const fresh = new LeaseStore({ leases, prefix: 'takeover', owner: 'new', expirationMs: 1000, now: () => clock });
    const held = (await old.tryAcquire(range)) as LeaseDocument;
    expect(await fresh.tryAcquire(range)).toBeUndefined(); // still alive
    clock += 1001;
    expect((await fresh.tryAcquire(range))?.Owner).toBe('new');
    await expect(old.checkpoint(held, 'late')).rejects.toBeInstanceOf(LeaseLostError);
  });
});

describe('retry policies as the worker registers them', () => {
  it('reads fixed delays and capped exponential backoff, and refuses what the host would refuse', () => {
    expect(retryPolicyOf('f', undefined).maxRetryCount).toBe(0);
    const fixed = retryPolicyOf('f', { strategy: 'fixedDelay', maxRetryCount: 3, delayInterval: { seconds: 2 } });
    expect([fixed.maxRetryCount, fixed.delayMs(1), fixed.delayMs(3)]).toEqual([3, 2000, 2000]);
    const backoff = retryPolicyOf('f', { strategy: 'exponentialBackoff', maxRetryCount: 5, minimumInterval: { seconds: 2 }, maximumInterval: { seconds: 10 } });
    expect([1, 2, 3, 4].map((n) => backoff.delayMs(n))).toEqual([2000, 4000, 8000, 10_000]);
    expect(() => retryPolicyOf('f', { strategy: 'linear' })).toThrow('f: retry.strategy must be "fixedDelay" or "exponentialBackoff", not "linear"');
    expect(() => retryPolicyOf('f', { strategy: 'fixedDelay', maxRetryCount: -2 })).toThrow('retry.maxRetryCount must be -1 or a whole number');
    expect(() => retryPolicyOf('f', { strategy: 'exponentialBackoff', minimumInterval: { seconds: 5 }, maximumInterval: { seconds: 1 } })).toThrow(
      'shorter than',
    );
  });
});
