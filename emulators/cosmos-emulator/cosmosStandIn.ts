import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import Account from '@vercel/cosmosdb-server/lib/account';
import type Collection from '@vercel/cosmosdb-server/lib/account/collection';
import routeRequest from '@vercel/cosmosdb-server/lib/routes';
import isTrueHeader from '@vercel/cosmosdb-server/lib/true-header';
import queryDocuments from '@vercel/cosmosdb-server/lib/handler/query-documents';
import readDocuments from '@vercel/cosmosdb-server/lib/handler/read-documents';
import createCollection from '@vercel/cosmosdb-server/lib/handler/create-collection';
import createDatabase from '@vercel/cosmosdb-server/lib/handler/create-database';
import deleteCollection from '@vercel/cosmosdb-server/lib/handler/delete-collection';
import deleteDatabase from '@vercel/cosmosdb-server/lib/handler/delete-database';
import patchDocument from '@vercel/cosmosdb-server/lib/handler/patch-document';
import readPartitionKeyRanges from '@vercel/cosmosdb-server/lib/handler/read-partition-key-ranges';
import { loseAnswerAfterApplying, requestKind } from './ambiguousWrites.js';
import type { RequestKind } from './ambiguousWrites.js';
import { handleAtomicBatch } from './atomicBatch.js';
import { handleBulk } from './bulkOperations.js';
import { handlePatchDocument } from './conditionalPatch.js';
import { handleChangeFeed, handlePartitionKeyRangeFeed, isChangeFeedRequest, onlyPartitionKeyRange, trackChanges } from './changeFeed.js';
import { OfferBook, handleOfferRequest, isOfferRequest, throughputProblem } from './offers.js';
import { handlePartitionKeyDelete, partitionKeyDeleteTarget } from './partitionKeyDelete.js';
import { installLinearQueryScan } from './linearQueryScan.js';
import { handlePartitionScopedQuery } from './partitionScopedQuery.js';
import { refuseOutOfScope } from './scopedPrincipals.js';
import type { ScopedPrincipals } from './scopedPrincipals.js';
import { needsValidation, validateWrite } from './requestValidation.js';
import { keepSystemPartitionKeyAsWritten } from './systemPartitionKey.js';
import { purgeAllExpired, purgeExpired, trackTimeToLive } from './timeToLive.js';
import { tallyKey } from './requestTally.js';
import type { RequestTally } from './requestTally.js';

/** The official emulator's published key: one local.settings.json serves the emulator and the stand-in. */
export const emulatorWellKnownKey = 'C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==';

export interface CosmosStandIn {
  readonly endpoint: string;
  readonly key: string;
  /** Answers the next matching requests with an error status, as a throttled or failing account would. */
  injectFault(fault: FaultRule): void;
  clearFaults(): void;
  /** How many requests the rules injected so far have hit: refused unapplied, or applied with the answer lost. */
  firedFaults(): { readonly refused: number; readonly answerLost: number };
  /** Every request received so far, by container and kind (requestTally.ts): what a workload costs in round trips. */
  requests(): RequestTally;
  close(): Promise<void>;
}

export interface FaultRule {
  readonly statusCode: number;
  /** How many matching requests fail; afterwards the rule is spent. */
  readonly times: number;
  /** An outage of a set length: the rule is spent this long after it was injected, whatever the count. */
  readonly forMs?: number;
  /** Only requests whose path contains this text (a container id, say). */
  readonly urlIncludes?: string;
  readonly method?: string;
  readonly batchOnly?: boolean;
  /** Only requests of these kinds (a create, a batch, a read, ...). */
  readonly kinds?: readonly RequestKind[];
  /** The share of matching requests the rule hits (0 to 1, default 1): a fault rate. */
  readonly rate?: number;
  /**
   * Apply the request, then lose its answer: the caller sees `statusCode` (408 or 503), or a dropped
   * connection when it is 0, although the write was made. Without it the request is refused unapplied.
   */
  readonly afterApplying?: boolean;
}

/** Control path for processes that share the stand-in (test workers): POST a FaultRule, DELETE to clear. */
export const faultControlPath = '/_standin/faults';

export interface CosmosStandInOptions {
  /** Where fault rates draw from (default Math.random): a test passes a seeded or scripted one. */
  readonly random?: () => number;
  /** 8081 like the official emulator; 0 for any free port. */
  readonly port?: number;
  readonly host?: string;
  /** PEM certificate and key to serve; by default the library's own self-signed pair. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Entra ID tokens whose role is scoped to one container: outside it they get Cosmos DB's 403 (sub-status 5301). */
  readonly scopedPrincipals?: ScopedPrincipals;
}

type Handler = (account: Account, req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => Promise<unknown>;

/**
 * An in-memory Cosmos DB that the real `@azure/cosmos` SDK talks to over HTTPS, composed on
 * `@vercel/cosmosdb-server` with the gaps this project depends on closed: transactional batches are
 * atomic. Connections are kept alive (the library closes each one, which is ~6x slower over TLS).
 * A development tool: never deployed, never a substitute for testing against Cosmos DB itself.
 */
export async function startCosmosStandIn(options: CosmosStandInOptions = {}): Promise<CosmosStandIn> {
  installLinearQueryScan();
  keepSystemPartitionKeyAsWritten();
  const packageDir = dirname(require.resolve('@vercel/cosmosdb-server/package.json'));
  const live: { account?: Account } = {};
  const faults: ActiveFault[] = [];
  const fired = { refused: 0, answerLost: 0 };
  const tally: Record<string, number> = {};
  const offers = new OfferBook();
  const server: Server = createServer(
    {
      cert: options.tls?.cert ?? readFileSync(join(packageDir, 'cert.pem')),
      key: options.tls?.key ?? readFileSync(join(packageDir, 'key.pem')),
      keepAlive: true,
    },
    (req, res) => {
      const { account } = live;
      if (!account) return;
      if (req.url === faultControlPath) {
        void controlFaults(faults, req, res);
        return;
      }
      const key = tallyKey(req);
      tally[key] = (tally[key] ?? 0) + 1;
      if (refuseOutOfScope(options.scopedPrincipals, 'stand-in', req, res)) return;
      const fault = takeFault(faults, req, options.random ?? Math.random);
      if (fault?.afterApplying) loseAnswerAfterApplying(req, res, fault.statusCode);
      else if (fault) {
        answerWithFault(fault, req, res);
        return;
      }
      void respond(account, offers, req, res);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8081, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  live.account = new Account(address.address, address.port);
  const sweep = setInterval(() => purgeAllExpired(), 1000);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
  return {
    endpoint: `https://${address.address}:${address.port}/`,
    key: emulatorWellKnownKey,
    injectFault: (rule) => faults.push(activeFault(rule)),
    clearFaults: () => {
      fired.refused += faults.filter((f) => !f.rule.afterApplying).reduce((n, f) => n + (f.rule.times - f.remaining), 0);
      fired.answerLost += faults.filter((f) => f.rule.afterApplying).reduce((n, f) => n + (f.rule.times - f.remaining), 0);
      faults.splice(0);
    },
    firedFaults: () => ({
      refused: fired.refused + faults.filter((f) => !f.rule.afterApplying).reduce((n, f) => n + (f.rule.times - f.remaining), 0),
      answerLost: fired.answerLost + faults.filter((f) => f.rule.afterApplying).reduce((n, f) => n + (f.rule.times - f.remaining), 0),
    }),
    requests: () => ({ ...tally }),
    close: () => closeServer(server),
  };
}

async function respond(account: Account, offers: OfferBook, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let body: unknown;
  try {
    const route = routeRequest(req) as [Record<string, string>, Handler] | undefined;
    const partitionKeyDelete = partitionKeyDeleteTarget(req);
    if (isOfferRequest(req)) {
      body = await handleOfferRequest(offers, req, res);
    } else if (route && isResourceLifecycle(route[1])) {
      body = await withOffers(account, offers, route, req, res);
    } else if (partitionKeyDelete) {
      observeCollection(account, partitionKeyDelete);
      body = handlePartitionKeyDelete(account, req, res, partitionKeyDelete);
    } else if (!route) {
      res.statusCode = 400;
      body = { code: 'BadRequest', message: `no route for ${req.method} ${req.url}` };
    } else {
      const [params, handler] = route;
      const collection = observeCollection(account, params);
      if (collection && isQueryPlanOnly(req, handler)) {
        writeResponse(req, res, singleRangeQueryPlan);
        return;
      }
      if (collection && isChangeFeedRequest(req) && (handler === (readDocuments as unknown) || handler === (readPartitionKeyRanges as unknown))) {
        body = handler === (readDocuments as unknown) ? handleChangeFeed(collection, req, res) : handlePartitionKeyRangeFeed(collection, req, res);
        writeResponse(req, res, body);
        return;
      }
      if (needsValidation(handler)) {
        const { request, failure } = await validateWrite(handler, req);
        if (failure) {
          res.statusCode = failure.statusCode;
          writeResponse(req, res, failure.body);
          return;
        }
        req = request;
      }
      const batchRequest = isTrueHeader(req, 'x-ms-cosmos-is-batch-request');
      const atomicBatch = batchRequest && isTrueHeader(req, 'x-ms-cosmos-batch-atomic');
      const query = handler === (queryDocuments as unknown);
      // The SDK asks for a query plan beside every query and uses it only when the gateway refuses
      // the query itself; the library would run the query over the whole container to answer it.
      const planRequest = query && isTrueHeader(req, 'x-ms-cosmos-is-query-plan-request');
      const scopedQuery = query && (planRequest || req.headers['x-ms-documentdb-partitionkey'] !== undefined);
      body = await (atomicBatch
        ? handleAtomicBatch(account, req, res, params as never)
        : batchRequest
          ? handleBulk(account, req, res, params as never)
          : scopedQuery
            ? handlePartitionScopedQuery(account, req, res, params as never, planRequest ? 'nothing' : 'partition')
            : handler === (patchDocument as unknown)
              ? handlePatchDocument(account, req, res, params as never)
              : handler(account, req, res, params));
    }
  } catch (error) {
    res.statusCode = 500;
    body = { code: 'InternalServerError', message: (error as Error).message };
  }
  writeResponse(req, res, body);
}

const lifecycleHandlers = new Set<unknown>([createCollection, createDatabase, deleteCollection, deleteDatabase]);

function isResourceLifecycle(handler: unknown): boolean {
  return lifecycleHandlers.has(handler);
}

/**
 * Creating or deleting a container or database, with its offer: a create's throughput is checked
 * before anything is made (400), the offer recorded once the resource exists, and a delete takes
 * the offers with it. A container create still goes through validation.
 */
async function withOffers(
  account: Account,
  offers: OfferBook,
  route: [Record<string, string>, Handler],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<unknown> {
  const [params, handler] = route;
  const database = params.dbId ? (account.database(params.dbId).read() as { _self?: string } | undefined) : undefined;
  if (handler === (deleteCollection as unknown) || handler === (deleteDatabase as unknown)) {
    const target =
      handler === (deleteDatabase as unknown)
        ? database
        : (account
            .database(params.dbId ?? '')
            .collection(params.collId ?? '')
            .read() as { _self?: string } | undefined);
    const body = await handler(account, req, res, params);
    if (res.statusCode < 300 && target?._self) offers.deleted(target._self);
    return body;
  }
  const problem = throughputProblem(req.headers);
  if (problem) {
    req.resume();
    res.statusCode = 400;
    return { code: 'BadRequest', message: problem };
  }
  let request = req;
  if (needsValidation(handler)) {
    const { request: checked, failure } = await validateWrite(handler, req);
    if (failure) {
      res.statusCode = failure.statusCode;
      return failure.body;
    }
    request = checked;
  }
  const body = (await handler(account, request, res, params)) as { _rid?: string; _self?: string } | undefined;
  if (res.statusCode === 201 && body?._rid && body._self) {
    offers.created({ _rid: body._rid, _self: body._self }, req.headers, handler === (createDatabase as unknown) ? 'database' : 'container', database?._self);
  }
  return body;
}

type ActiveFault = { rule: FaultRule; remaining: number; untilEpochMs: number };

async function controlFaults(faults: ActiveFault[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'DELETE') {
    faults.splice(0);
  } else {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rule = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FaultRule;
    faults.push(activeFault(rule));
  }
  res.statusCode = 204;
  res.end();
}

function matches(rule: FaultRule, req: IncomingMessage): boolean {
  if (rule.method && rule.method !== req.method) return false;
  if (rule.batchOnly && !isTrueHeader(req, 'x-ms-cosmos-is-batch-request')) return false;
  if (rule.kinds && !rule.kinds.includes(requestKind(req))) return false;
  return rule.urlIncludes === undefined || decodeURIComponent(req.url ?? '').includes(rule.urlIncludes);
}

function activeFault(rule: FaultRule): ActiveFault {
  return { rule, remaining: rule.times, untilEpochMs: rule.forMs === undefined ? Infinity : Date.now() + rule.forMs };
}

/** The first live rule that matches the request and, by its rate, hits it; counted as spent once. */
function takeFault(faults: ActiveFault[], req: IncomingMessage, random: () => number): FaultRule | undefined {
  const now = Date.now();
  const fault = faults.find((f) => f.remaining > 0 && f.untilEpochMs > now && matches(f.rule, req) && (f.rule.rate === undefined || random() < f.rule.rate));
  if (!fault) return undefined;
  fault.remaining -= 1;
  return fault.rule;
}

function answerWithFault(rule: FaultRule, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  res.statusCode = rule.statusCode;
  if (rule.statusCode === 429) res.setHeader('x-ms-retry-after-ms', '1');
  writeResponse(req, res, { code: 'InjectedFault', message: `fault injected by the stand-in: ${rule.statusCode}` });
}

/**
 * Every request to a collection first removes what has expired, so no request can see it, and
 * makes sure the collection's writes are observed (time to live, change feed) before any is made.
 */
function observeCollection(account: Account, params: Record<string, string>): Collection | undefined {
  if (!params.dbId || !params.collId) return undefined;
  const collection = account.database(params.dbId).collection(params.collId);
  if (!collection.read()) return undefined;
  trackTimeToLive(collection, () => account.database(params.dbId ?? '').collection(params.collId ?? '') === collection);
  trackChanges(collection);
  purgeExpired(collection);
  return collection;
}

/**
 * The .NET SDK on Linux has no native query engine: for a cross-partition query it asks the gateway
 * for a query plan and needs a real one (the JS SDK asks only beside a partition-scoped query). With
 * one partition key range and the query run whole by that range, a plan that asks for nothing
 * client-side (no ORDER BY merge, no aggregates) is exact.
 */
const singleRangeQueryPlan = {
  partitionedQueryExecutionInfoVersion: 2,
  queryInfo: {
    distinctType: 'None',
    top: null,
    offset: null,
    limit: null,
    orderBy: [],
    orderByExpressions: [],
    groupByExpressions: [],
    groupByAliases: [],
    aggregates: [],
    groupByAliasToAggregateType: {},
    rewrittenQuery: '',
    hasSelectValue: false,
    dCountInfo: null,
    hasNonStreamingOrderBy: false,
  },
  queryRanges: [{ min: onlyPartitionKeyRange.minInclusive, max: onlyPartitionKeyRange.maxExclusive, isMinInclusive: true, isMaxInclusive: false }],
};

function isQueryPlanOnly(req: IncomingMessage, handler: unknown): boolean {
  const crossPartition = req.headers['x-ms-documentdb-partitionkey'] === undefined;
  return req.method === 'POST' && isTrueHeader(req, 'x-ms-cosmos-is-query-plan-request') && (crossPartition || handler !== (queryDocuments as unknown));
}

function writeResponse(req: IncomingMessage, res: ServerResponse, body: unknown): void {
  const etag = (body as { _etag?: string } | undefined)?._etag;
  if (etag) res.setHeader('etag', etag);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-location', `https://${req.headers.host}${req.url}`);
  res.setHeader('x-ms-activity-id', randomUUID());
  res.setHeader('x-ms-request-charge', '1');
  if (res.statusCode === 304) {
    res.end();
    return;
  }
  const withMessage = res.statusCode > 399 && typeof body === 'object' && body !== null && !('message' in body) ? { ...body, message: '' } : body;
  res.end(JSON.stringify(withMessage ?? {}));
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}
