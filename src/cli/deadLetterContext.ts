import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import { readSubscriptionRoute } from './copyDelivery.js';
import { activeReceiver, deadLetterReceiver, entityPath } from './deadLetterQueue.js';
import type { EntityAddress } from './deadLetterQueue.js';
import type { DlqContext, Output } from './dlqCommands.js';
import type { DlqIo } from './dlqIo.js';
import type { GlobalOptions } from './globalOptions.js';
import { commandClientOf } from './serviceBusConnection.js';
import { checkCosmosContainer, probeServiceBusEntity } from './setupChecks.js';

/** The dead-letter queue the options name (and, given an account, the store), checked before `run` and closed after it. */
export async function withDeadLetterContext(options: GlobalOptions, io: DlqIo, run: (ctx: DlqContext) => Promise<void>): Promise<void> {
  const address = entityOf(options);
  const client = commandClientOf(options, options.timeout);
  const cosmos = options.cosmosEndpoint
    ? createCosmosClient({ endpoint: options.cosmosEndpoint, key: options.cosmosKey, credential: io.cosmosCredential })
    : undefined;
  const container = cosmos?.database(options.cosmosDatabase).container(options.cosmosContainer);
  const receiver = deadLetterReceiver(client, address);
  const active = activeReceiver(client, address);
  const out: Output = { line: io.stdout, progress: io.stderr };
  try {
    await probeServiceBusEntity(options, address, options.timeout);
    if (container && options.cosmosEndpoint) await checkCosmosContainer({ container, endpoint: options.cosmosEndpoint, timeoutMs: options.timeout });
    await run({
      receiver,
      active,
      sender: () => client.createSender(address.queue ?? address.topic ?? ''),
      entityPath: entityPath(address),
      resubmitTo: address.subscription,
      route: address.topic && address.subscription ? await readSubscriptionRoute(client, address.topic, address.subscription) : undefined,
      store: container && new CosmosDocumentStore(container),
      consumerName: options.consumerName,
      duplicateDetectionWindowMs: options.duplicateWindow,
      now: io.now ?? (() => Date.now()),
      out,
    });
  } finally {
    await receiver.close();
    await active.close();
    await client.close();
    cosmos?.dispose();
  }
}

function entityOf(options: GlobalOptions): EntityAddress {
  if (options.topic || options.subscription) {
    if (!options.topic || !options.subscription) throw new Error('--topic and --subscription go together');
    return { topic: options.topic, subscription: options.subscription };
  }
  return { queue: options.queue };
}
