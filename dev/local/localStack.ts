import { startCosmosStandIn } from '../cosmos/cosmosStandIn.js';
import type { CosmosStandIn } from '../cosmos/cosmosStandIn.js';
import { loadQueueFile, startServiceBusEmulator, toQueueSettings } from '../servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../servicebus-emulator/index.js';
import { createCosmosClient } from '../../src/cosmos/index.js';

export interface LocalStack {
  readonly cosmos: CosmosStandIn;
  readonly serviceBus: ServiceBusEmulator;
  /** The app settings that point the Functions app (or Core Tools) at this stack. */
  readonly settings: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

export interface LocalStackOptions {
  /** The emulators' usual ports (5672, 8081) instead of free ones. */
  readonly wellKnownPorts: boolean;
  /** Overrides the queue file's lock duration (the demo plays crashed consumers, whose locks must run out quickly). */
  readonly lockDurationMs?: number;
}

export const localDatabase = 'orders';
export const localContainer = 'orders';

/** Both stand-ins, with the queues of infra/servicebus-queues.json and the container the Bicep creates. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const cosmos = await startCosmosStandIn({ port: options.wellKnownPorts ? 8081 : 0 });
  const client = createCosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key });
  const { database } = await client.databases.createIfNotExists({ id: localDatabase });
  await database.containers.createIfNotExists({ id: localContainer, partitionKey: { paths: ['/orderId'] }, defaultTtl: -1 });
  client.dispose();

  const file = loadQueueFile();
  const queues = Object.fromEntries(
    Object.entries(file.queues).map(([name, definition]) => {
      const settings = toQueueSettings(definition);
      return [name, options.lockDurationMs === undefined ? settings : { ...settings, lockDurationMs: options.lockDurationMs }];
    }),
  );
  const serviceBus = await startServiceBusEmulator({ port: options.wellKnownPorts ? 5672 : 0, queues });
  const orders = file.queues.orders;
  const settings: Record<string, string> = {
    ServiceBusConnection: serviceBus.connectionString,
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: cosmos.endpoint,
    COSMOS_KEY: cosmos.key,
    COSMOS_DATABASE: localDatabase,
    COSMOS_ORDERS_CONTAINER: localContainer,
    ...(orders
      ? {
          QUEUE_MAX_DELIVERY_COUNT: String(orders.maxDeliveryCount),
          QUEUE_LOCK_DURATION_SECONDS: String(orders.lockDurationSeconds),
          QUEUE_MESSAGE_TTL_SECONDS: String(orders.defaultMessageTimeToLiveSeconds),
        }
      : {}),
    LOCK_RENEWAL_MAX_SECONDS: String(file.operations.lockRenewalMaxSeconds),
    DLQ_RESUBMIT_HORIZON_SECONDS: String(file.operations.deadLetterResubmitHorizonSeconds),
    INBOX_MARKER_TTL_SECONDS: String(file.operations.inboxMarkerTtlSeconds),
  };
  return {
    cosmos,
    serviceBus,
    settings,
    async close() {
      await serviceBus.close();
      await cosmos.close();
    },
  };
}
