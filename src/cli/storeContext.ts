import { loadResubmitRetention } from '../config.js';
import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import type { DlqIo } from './dlqIo.js';
import type { GlobalOptions } from './globalOptions.js';
import type { ParkedContext } from './parkedCommands.js';
import { commandClientOf } from './serviceBusConnection.js';
import { checkCosmosContainer, probeServiceBusEntity } from './setupChecks.js';

/** The orders container (and, to resubmit, the queue) for the commands whose records live in Cosmos DB: parked items, outbox entries, shipments. */
export async function withStoreContext(
  options: GlobalOptions,
  io: DlqIo,
  needsQueue: boolean,
  run: (ctx: ParkedContext) => Promise<void>,
  /** The operator-action record of this run, if one was written. */
  runId?: string,
): Promise<void> {
  if (!options.cosmosEndpoint)
    throw new Error('parked items, outbox entries and shipment records live in Cosmos DB: give --cosmos-endpoint (or COSMOS_ENDPOINT)');
  // How long a discarded or resubmitted item is kept as evidence: read by the app's own rules, before anything is touched.
  const keepSeconds = loadResubmitRetention(io.env).markerTtlSeconds;
  const cosmos = createCosmosClient({ endpoint: options.cosmosEndpoint, key: options.cosmosKey, credential: io.cosmosCredential });
  const container = cosmos.database(options.cosmosDatabase).container(options.cosmosContainer);
  const client = needsQueue ? commandClientOf(options, options.timeout) : undefined;
  try {
    await checkCosmosContainer({ container, endpoint: options.cosmosEndpoint, timeoutMs: options.timeout });
    if (client) await probeServiceBusEntity(options, { queue: options.queue }, options.timeout);
    await run({
      store: new CosmosDocumentStore(container),
      sender: () => {
        if (!client) throw new Error('no Service Bus connection');
        return client.createSender(options.queue ?? 'orders');
      },
      consumerName: options.consumerName,
      keepSeconds,
      now: io.now ?? (() => Date.now()),
      out: { line: io.stdout, progress: io.stderr },
      ...(runId === undefined ? {} : { runId }),
    });
  } finally {
    await client?.close();
    cosmos.dispose();
  }
}
