import { setTimeout as delay } from 'node:timers/promises';
import { ChangeFeedStartFrom, StatusCodes } from '@azure/cosmos';
import type { ChangeFeedPullModelIterator, Container, CosmosClient, FeedRange } from '@azure/cosmos';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { LeaseLostError, LeaseStore } from './cosmosLeases.js';
import type { LeaseDocument } from './cosmosLeases.js';
import type { RegisteredFunction } from './functionsCore.js';
import { invokeRegisteredFunction } from './hostInvocation.js';
import type { InvocationResult } from './hostInvocation.js';
import { resolveBindingExpression } from './hostSettings.js';
import { retryPolicyOf } from './retryPolicy.js';
import type { RetryPolicy } from './retryPolicy.js';

/** The Cosmos DB extension's defaults (host.json `extensions.cosmosDB` and the trigger's own properties). */
export const cosmosTriggerDefaults = {
  feedPollDelayMs: 5000,
  leaseAcquireIntervalMs: 13_000,
  leaseExpirationIntervalMs: 60_000,
  leaseRenewIntervalMs: 17_000,
  maxItemsPerInvocation: 100,
  leaseContainerName: 'leases',
} as const;

export interface CosmosTriggerOptions {
  readonly settings: Readonly<Record<string, string>>;
  /** Who this host instance is in the leases (the host uses its instance id). */
  readonly instanceId: string;
  /** Overrides for tests and the local stack, which cannot wait the defaults' seconds. */
  readonly intervals?: Partial<Record<'feedPollDelayMs' | 'leaseAcquireIntervalMs' | 'leaseExpirationIntervalMs' | 'leaseRenewIntervalMs', number>>;
  readonly onInvocation?: (fn: RegisteredFunction, documents: readonly Record<string, unknown>[], result: InvocationResult, attempt: number) => void;
  readonly onError?: (fn: RegisteredFunction, error: unknown) => void;
}

export interface CosmosTriggerListener {
  readonly functionName: string;
  readonly containerName: string;
  /** The feed ranges whose leases this instance holds now. */
  ownedLeases(): readonly string[];
  /**
   * `releaseLeases: false` plays a host that died: nothing more is checkpointed or released, so
   * another instance takes the leases over only once they expire, from their last checkpoint.
   */
  close(options?: { releaseLeases?: boolean }): Promise<void>;
}

interface OwnedRange {
  lease: LeaseDocument;
  /** Lease writes of one range run one after another: a renewal must not race a checkpoint. */
  writes: Promise<unknown>;
  lost: boolean;
  processing: Promise<void>;
}

/**
 * Runs one Cosmos DB–triggered function as the Functions host does (through the .NET change feed
 * processor): each feed range of the monitored container has a lease in the leases container; an
 * instance acquires free or expired leases every `leaseAcquireInterval`, renews its own every
 * `leaseRenewInterval`, and for each reads the feed from the lease's checkpoint (or, for a new
 * lease, from the beginning, `startFromTime`, or now), invokes the function with a batch of up to
 * `maxItemsPerInvocation` documents, applies the function's retry policy when it throws, and then
 * checkpoints, whether or not the function succeeded: the host moves on. Not here: load balancing
 * between instances (the stand-in has one range per container, so one instance at a time reads it).
 */
export async function startCosmosTriggerListener(fn: RegisteredFunction, trigger: Record<string, unknown>, options: CosmosTriggerOptions): Promise<CosmosTriggerListener> {
  const name = fn.metadata.name;
  const text = (key: string) => (trigger[key] === undefined ? undefined : resolveBindingExpression(String(trigger[key]), options.settings));
  const databaseName = required(name, 'databaseName', text('databaseName'));
  const containerName = required(name, 'containerName', text('containerName'));
  const connection = required(name, 'connection', text('connection'));
  const client = cosmosClientFor(connection, options.settings);
  const leaseClient = text('leaseConnection') ? cosmosClientFor(text('leaseConnection') as string, options.settings) : client;
  const leaseDatabase = text('leaseDatabaseName') ?? databaseName;
  const leaseContainerName = text('leaseContainerName') ?? cosmosTriggerDefaults.leaseContainerName;
  const intervals = { ...cosmosTriggerDefaults, ...numbers(trigger), ...options.intervals };
  const maxItems = typeof trigger.maxItemsPerInvocation === 'number' ? trigger.maxItemsPerInvocation : cosmosTriggerDefaults.maxItemsPerInvocation;
  const retry = retryPolicyOf(name, fn.metadata.retryOptions);

  const monitored = client.database(databaseName).container(containerName);
  await mustExist(monitored, `${name}: the monitored container ${databaseName}/${containerName} does not exist`);
  const leases = await leaseContainer(leaseClient, leaseDatabase, leaseContainerName, trigger.createLeaseContainerIfNotExists === true, name);
  const store = new LeaseStore({
    leases,
    prefix: `${text('leaseContainerPrefix') ?? ''}${databaseName}_${containerName}`,
    owner: options.instanceId,
    expirationMs: intervals.leaseExpirationIntervalMs,
  });

  const owned = new Map<string, OwnedRange>();
  let closed = false;
  let crashed = false;
  const timers: NodeJS.Timeout[] = [];
  const stopping = new AbortController();
  // A poll delay or a retry wait ends at once when the listener closes.
  const sleep = (ms: number) => delay(ms, undefined, { signal: stopping.signal }).catch(() => undefined);

  const startFrom = (range: FeedRange, lease: LeaseDocument) => {
    if (lease.ContinuationToken) return ChangeFeedStartFrom.Continuation(lease.ContinuationToken);
    if (trigger.startFromBeginning === true) return ChangeFeedStartFrom.Beginning(range);
    const startFromTime = text('startFromTime');
    if (startFromTime) return ChangeFeedStartFrom.Time(new Date(startFromTime), range);
    return ChangeFeedStartFrom.Now(range);
  };

  const writeLease = (range: OwnedRange, write: (lease: LeaseDocument) => Promise<LeaseDocument>) => {
    const next = range.writes.then(async () => {
      if (range.lost || crashed) return;
      try {
        range.lease = await write(range.lease);
      } catch (error) {
        if (error instanceof LeaseLostError) range.lost = true;
        else options.onError?.(fn, error);
      }
    });
    range.writes = next;
    return next;
  };

  const readRange = async (range: FeedRange, ownedRange: OwnedRange, listening: () => void) => {
    const iterator: ChangeFeedPullModelIterator<Record<string, unknown>> = monitored.items.getChangeFeedIterator({ changeFeedStartFrom: startFrom(range, ownedRange.lease), maxItemCount: maxItems });
    while (!closed && !ownedRange.lost) {
      let page;
      try {
        page = await iterator.readNext();
        listening();
      } catch (error) {
        listening();
        options.onError?.(fn, error);
        await sleep(intervals.feedPollDelayMs);
        continue;
      }
      if (page.statusCode === StatusCodes.NotModified || page.result.length === 0) {
        await sleep(intervals.feedPollDelayMs);
        continue;
      }
      await invokeWithRetries(fn, page.result, retry, options, () => closed || ownedRange.lost, sleep);
      if (crashed) return;
      await writeLease(ownedRange, (lease) => store.checkpoint(lease, page.continuationToken));
    }
  };

  const acquire = async () => {
    if (closed) return;
    try {
      for (const range of await monitored.getFeedRanges()) {
        const id = store.idOf(range);
        const current = owned.get(id);
        if (current && !current.lost) continue;
        const lease = await store.tryAcquire(range);
        if (!lease || closed) continue;
        const ownedRange: OwnedRange = { lease, writes: Promise.resolve(), lost: false, processing: Promise.resolve() };
        owned.set(id, ownedRange);
        // "From now" means from the first read: the listener counts as started once it has made it.
        let listening = () => {};
        const firstRead = new Promise<void>((resolve) => (listening = resolve));
        ownedRange.processing = readRange(range, ownedRange, listening);
        await Promise.race([firstRead, ownedRange.processing]);
      }
    } catch (error) {
      options.onError?.(fn, error);
    }
  };

  await acquire();
  timers.push(setInterval(() => void acquire(), intervals.leaseAcquireIntervalMs));
  timers.push(
    setInterval(() => {
      for (const ownedRange of owned.values()) if (!ownedRange.lost) void writeLease(ownedRange, (lease) => store.renew(lease));
    }, intervals.leaseRenewIntervalMs),
  );

  return {
    functionName: name,
    containerName,
    ownedLeases: () => [...owned.entries()].filter(([, o]) => !o.lost).map(([id]) => id),
    async close({ releaseLeases = true } = {}) {
      closed = true;
      crashed = !releaseLeases;
      stopping.abort();
      for (const timer of timers) clearInterval(timer);
      await Promise.all([...owned.values()].map((o) => o.processing));
      if (releaseLeases) await Promise.all([...owned.values()].map((o) => writeLease(o, async (lease) => (await store.release(lease), lease))));
      else await Promise.all([...owned.values()].map((o) => o.writes));
      if (leaseClient !== client) leaseClient.dispose();
      client.dispose();
    },
  };
}

async function invokeWithRetries(
  fn: RegisteredFunction,
  documents: Record<string, unknown>[],
  retry: RetryPolicy,
  options: CosmosTriggerOptions,
  stop: () => boolean,
  sleep: (ms: number) => Promise<unknown>,
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    const result = await invokeRegisteredFunction(fn, { json: JSON.stringify(documents) }, {});
    options.onInvocation?.(fn, documents, result, attempt);
    if (result.error === undefined) return;
    const exhausted = retry.maxRetryCount !== -1 && attempt >= retry.maxRetryCount;
    if (exhausted || stop()) return;
    await sleep(retry.delayMs(attempt + 1));
  }
}

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

async function leaseContainer(client: CosmosClient, databaseName: string, containerName: string, create: boolean, functionName: string): Promise<Container> {
  if (create) {
    const { database } = await client.databases.createIfNotExists({ id: databaseName });
    const { container } = await database.containers.createIfNotExists({ id: containerName, partitionKey: { paths: ['/id'] } });
    return container;
  }
  const container = client.database(databaseName).container(containerName);
  await mustExist(container, `${functionName}: the lease container ${databaseName}/${containerName} does not exist (create it, or set createLeaseContainerIfNotExists)`);
  const { resource } = await container.read();
  const paths = resource?.partitionKey?.paths ?? [];
  if (paths.length !== 1 || paths[0] !== '/id') throw new Error(`${functionName}: the lease container ${containerName} must be partitioned by /id, not ${paths.join(', ')}`);
  return container;
}

async function mustExist(container: Container, message: string): Promise<void> {
  try {
    await container.read();
  } catch (error) {
    if ((error as { code?: number }).code === 404) throw new Error(message);
    throw error;
  }
}

function numbers(trigger: Record<string, unknown>): Partial<Record<string, number>> {
  const pick = (key: string) => (typeof trigger[key] === 'number' ? (trigger[key] as number) : undefined);
  const entries = {
    feedPollDelayMs: pick('feedPollDelay'),
    leaseAcquireIntervalMs: pick('leaseAcquireInterval'),
    leaseExpirationIntervalMs: pick('leaseExpirationInterval'),
    leaseRenewIntervalMs: pick('leaseRenewInterval'),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

function required(functionName: string, property: string, value: string | undefined): string {
  if (!value) throw new Error(`${functionName}: the Cosmos DB trigger has no ${property}`);
  return value;
}
