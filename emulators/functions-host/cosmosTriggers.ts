import { setTimeout as delay } from 'node:timers/promises';
import { ChangeFeedStartFrom, StatusCodes } from '@azure/cosmos';
import type { ChangeFeedPullModelIterator, Container, CosmosClient, FeedRange } from '@azure/cosmos';
import { LeaseLostError, LeaseStore } from './cosmosLeases.js';
import type { LeaseDocument } from './cosmosLeases.js';
import { readCosmosTriggerBinding } from './cosmosTriggerBinding.js';
import type { CosmosTriggerBinding, CosmosTriggerInterval } from './cosmosTriggerBinding.js';
import { cosmosClientFor, mustExist, openLeaseContainer } from './cosmosTriggerContainers.js';
import type { RegisteredFunction } from './functionsCore.js';
import { invokeRegisteredFunction } from './hostInvocation.js';
import type { InvocationResult } from './hostInvocation.js';

export interface CosmosTriggerOptions {
  readonly settings: Readonly<Record<string, string>>;
  /** Who this host instance is in the leases (the host uses its instance id). */
  readonly instanceId: string;
  /** Overrides for tests and the local stack, which cannot wait the defaults' seconds. */
  readonly intervals?: Partial<Record<CosmosTriggerInterval, number>>;
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
export async function startCosmosTriggerListener(
  fn: RegisteredFunction,
  trigger: Record<string, unknown>,
  options: CosmosTriggerOptions,
): Promise<CosmosTriggerListener> {
  const binding = readCosmosTriggerBinding(fn, trigger, options.settings, options.intervals);
  const containers = await openContainers(binding, options.settings);
  const leases = new LeaseStore({
    leases: containers.leases,
    prefix: binding.leasePrefix,
    owner: options.instanceId,
    expirationMs: binding.intervals.leaseExpirationIntervalMs,
  });
  const listener = new ChangeFeedListener(fn, binding, containers, leases, options);
  await listener.start();
  return {
    functionName: binding.functionName,
    containerName: binding.containerName,
    ownedLeases: () => listener.ownedLeases(),
    close: ({ releaseLeases = true } = {}) => listener.close(releaseLeases),
  };
}

interface TriggerContainers {
  readonly client: CosmosClient;
  readonly leaseClient: CosmosClient;
  readonly monitored: Container;
  readonly leases: Container;
}

/** The monitored container must exist; the leases' may be made (createLeaseContainerIfNotExists). */
async function openContainers(binding: CosmosTriggerBinding, settings: Readonly<Record<string, string>>): Promise<TriggerContainers> {
  const client = cosmosClientFor(binding.connection, settings);
  const leaseClient = binding.leaseConnection ? cosmosClientFor(binding.leaseConnection, settings) : client;
  const monitored = client.database(binding.databaseName).container(binding.containerName);
  await mustExist(monitored, `${binding.functionName}: the monitored container ${binding.databaseName}/${binding.containerName} does not exist`);
  const leases = await openLeaseContainer(
    leaseClient,
    binding.leaseDatabaseName,
    binding.leaseContainerName,
    binding.createLeaseContainerIfNotExists,
    binding.functionName,
  );
  return { client, leaseClient, monitored, leases };
}

interface OwnedRange {
  lease: LeaseDocument;
  /** Lease writes of one range run one after another: a renewal must not race a checkpoint. */
  writes: Promise<unknown>;
  lost: boolean;
  processing: Promise<void>;
}

/** The listener's steps: acquire leases, read each owned range's feed, invoke, checkpoint, renew, close. */
class ChangeFeedListener {
  private readonly owned = new Map<string, OwnedRange>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly stopping = new AbortController();
  private closed = false;
  private crashed = false;

  constructor(
    private readonly fn: RegisteredFunction,
    private readonly binding: CosmosTriggerBinding,
    private readonly containers: TriggerContainers,
    private readonly leases: LeaseStore,
    private readonly options: CosmosTriggerOptions,
  ) {}

  async start(): Promise<void> {
    await this.acquireLeases();
    this.timers.push(setInterval(() => void this.acquireLeases(), this.binding.intervals.leaseAcquireIntervalMs));
    this.timers.push(setInterval(() => this.renewLeases(), this.binding.intervals.leaseRenewIntervalMs));
  }

  ownedLeases(): readonly string[] {
    return [...this.owned.entries()].filter(([, o]) => !o.lost).map(([id]) => id);
  }

  /** Takes every free or expired lease and starts reading its range; resolves once each has made its first read. */
  private async acquireLeases(): Promise<void> {
    if (this.closed) return;
    try {
      for (const range of await this.containers.monitored.getFeedRanges()) await this.acquireLease(range);
    } catch (error) {
      this.options.onError?.(this.fn, error);
    }
  }

  private async acquireLease(range: FeedRange): Promise<void> {
    const id = this.leases.idOf(range);
    const current = this.owned.get(id);
    if (current && !current.lost) return;
    const lease = await this.leases.tryAcquire(range);
    if (!lease || this.closed) return;
    const ownedRange: OwnedRange = { lease, writes: Promise.resolve(), lost: false, processing: Promise.resolve() };
    this.owned.set(id, ownedRange);
    // "From now" means from the first read: the listener counts as started once it has made it.
    let listening = () => {};
    const firstRead = new Promise<void>((resolve) => (listening = resolve));
    ownedRange.processing = this.readRange(range, ownedRange, listening);
    await Promise.race([firstRead, ownedRange.processing]);
  }

  private renewLeases(): void {
    for (const ownedRange of this.owned.values()) if (!ownedRange.lost) void this.writeLease(ownedRange, (lease) => this.leases.renew(lease));
  }

  /** Reads one range's feed until the listener closes or the lease is lost: invoke, then checkpoint. */
  private async readRange(range: FeedRange, ownedRange: OwnedRange, listening: () => void): Promise<void> {
    const iterator: ChangeFeedPullModelIterator<Record<string, unknown>> = this.containers.monitored.items.getChangeFeedIterator({
      changeFeedStartFrom: this.startFrom(range, ownedRange.lease),
      maxItemCount: this.binding.maxItemsPerInvocation,
    });
    while (!this.closed && !ownedRange.lost) {
      let page;
      try {
        page = await iterator.readNext();
        listening();
      } catch (error) {
        listening();
        this.options.onError?.(this.fn, error);
        await this.sleep(this.binding.intervals.feedPollDelayMs);
        continue;
      }
      if (page.statusCode === StatusCodes.NotModified || page.result.length === 0) {
        await this.sleep(this.binding.intervals.feedPollDelayMs);
        continue;
      }
      await this.invokeWithRetries(page.result, () => this.closed || ownedRange.lost);
      if (this.crashed) return;
      const continuation = page.continuationToken;
      await this.writeLease(ownedRange, (lease) => this.leases.checkpoint(lease, continuation));
    }
  }

  /** A lease's checkpoint first; a new lease from the beginning, `startFromTime`, or now. */
  private startFrom(range: FeedRange, lease: LeaseDocument): ChangeFeedStartFrom {
    if (lease.ContinuationToken) return ChangeFeedStartFrom.Continuation(lease.ContinuationToken);
    if (this.binding.startFromBeginning) return ChangeFeedStartFrom.Beginning(range);
    if (this.binding.startFromTime) return ChangeFeedStartFrom.Time(this.binding.startFromTime, range);
    return ChangeFeedStartFrom.Now(range);
  }

  /** The function's retry policy around one batch; the host moves on (checkpoints) whatever the last attempt did. */
  private async invokeWithRetries(documents: Record<string, unknown>[], stop: () => boolean): Promise<void> {
    const retry = this.binding.retry;
    for (let attempt = 0; ; attempt += 1) {
      const result = await invokeRegisteredFunction(this.fn, { json: JSON.stringify(documents) }, {});
      this.options.onInvocation?.(this.fn, documents, result, attempt);
      if (result.error === undefined) return;
      const exhausted = retry.maxRetryCount !== -1 && attempt >= retry.maxRetryCount;
      if (exhausted || stop()) return;
      await this.sleep(retry.delayMs(attempt + 1));
    }
  }

  private writeLease(range: OwnedRange, write: (lease: LeaseDocument) => Promise<LeaseDocument>): Promise<unknown> {
    const next = range.writes.then(async () => {
      if (range.lost || this.crashed) return;
      try {
        range.lease = await write(range.lease);
      } catch (error) {
        if (error instanceof LeaseLostError) range.lost = true;
        else this.options.onError?.(this.fn, error);
      }
    });
    range.writes = next;
    return next;
  }

  /** A poll delay or a retry wait ends at once when the listener closes. */
  private sleep(ms: number): Promise<unknown> {
    return delay(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  async close(releaseLeases: boolean): Promise<void> {
    this.closed = true;
    this.crashed = !releaseLeases;
    this.stopping.abort();
    for (const timer of this.timers) clearInterval(timer);
    const owned = [...this.owned.values()];
    await Promise.all(owned.map((o) => o.processing));
    if (releaseLeases) await Promise.all(owned.map((o) => this.writeLease(o, async (lease) => (await this.leases.release(lease), lease))));
    else await Promise.all(owned.map((o) => o.writes));
    if (this.containers.leaseClient !== this.containers.client) this.containers.leaseClient.dispose();
    this.containers.client.dispose();
  }
}
