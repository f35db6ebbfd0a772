import '../src/telemetry/startup.js'; // first: telemetry before the SDKs load and before any meter is taken
import { app } from '@azure/functions';
import type { InvocationContext } from '@azure/functions';
import { loadSettings } from '../src/config.js';
import { createOutboxPublisher } from '../src/outbox/index.js';

const publisher = createOutboxPublisher(loadSettings());

/**
 * Sends the pending outbox entries among the changed documents, then marks each published (up to
 * OUTBOX_MARK_CONCURRENCY at once). A throw (a destination or a mark that failed for now) makes the
 * host retry the batch under the retry policy below; once that is spent the host checkpoints and
 * moves on, and `sweepOutbox` picks up what was left.
 */
export async function publishOutbox(documents: unknown[], context: InvocationContext): Promise<void> {
  await publisher.publishChanges(documents as Record<string, unknown>[], context);
}

app.cosmosDB('publishOutbox', {
  // CosmosDbConnection: a connection string locally; CosmosDbConnection__accountEndpoint with
  // __credential=managedidentity and __clientId in Azure (set by infra/).
  connection: 'CosmosDbConnection',
  databaseName: '%COSMOS_DATABASE%',
  containerName: '%COSMOS_ORDERS_CONTAINER%',
  leaseContainerName: '%COSMOS_LEASES_CONTAINER%',
  // The Bicep creates it: with an identity the trigger may not create containers.
  createLeaseContainerIfNotExists: false,
  // A new lease starts at the beginning of the feed, so entries written before the first deployment
  // of this function (or after its leases were deleted) are published, not skipped.
  startFromBeginning: true,
  maxItemsPerInvocation: 100,
  // 1 s instead of the default 5 s: the lag between commit and publish is what consumers wait for.
  feedPollDelay: 1000,
  // The trigger gives up on a failed batch at once unless a policy says otherwise.
  retry: { strategy: 'exponentialBackoff', maxRetryCount: 5, minimumInterval: { seconds: 2 }, maximumInterval: { seconds: 60 } },
  handler: publishOutbox,
});
