import { settingDefaults } from '../config.js';
import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import type { DlqIo } from './dlqIo.js';
import type { GlobalOptions } from './globalOptions.js';
import type { ParkedContext } from './parkedCommands.js';
import { namespaceOf, serviceBusClientOf } from './serviceBusConnection.js';
import { checkCosmosContainer, checkServiceBusEntity } from './setupChecks.js';

/** The orders container (and, to resubmit, the queue) for the commands whose records live in Cosmos DB: parked items, outbox entries, shipments. */
export async function withStoreContext(options: GlobalOptions, io: DlqIo, needsQueue: boolean, run: (ctx: ParkedContext) => Promise<void>): Promise<void> {
  if (!options.cosmosEndpoint)
    throw new Error('parked items, outbox entries and shipment records live in Cosmos DB: give --cosmos-endpoint (or COSMOS_ENDPOINT)');
  const cosmos = createCosmosClient({ endpoint: options.cosmosEndpoint, key: options.cosmosKey, credential: io.cosmosCredential });
  const container = cosmos.database(options.cosmosDatabase).container(options.cosmosContainer);
  const client = needsQueue
    ? serviceBusClientOf(options, { timeoutInMs: options.timeout, maxRetries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 2_000 })
    : undefined;
  try {
    await checkCosmosContainer({ container, endpoint: options.cosmosEndpoint, timeoutMs: options.timeout });
    if (client) {
      const probe = serviceBusClientOf(options, { timeoutInMs: options.timeout, maxRetries: 0 });
      await checkServiceBusEntity({ client: probe, address: { queue: options.queue }, namespace: namespaceOf(options), timeoutMs: options.timeout }).finally(
        () => probe.close(),
      );
    }
    await run({
      store: new CosmosDocumentStore(container),
      sender: () => {
        if (!client) throw new Error('no Service Bus connection');
        return client.createSender(options.queue ?? 'orders');
      },
      consumerName: options.consumerName,
      keepSeconds: Number(io.env.INBOX_MARKER_TTL_SECONDS ?? settingDefaults.INBOX_MARKER_TTL_SECONDS),
      now: io.now ?? (() => Date.now()),
      out: { line: io.stdout, progress: io.stderr },
    });
  } finally {
    await client?.close();
    cosmos.dispose();
  }
}
