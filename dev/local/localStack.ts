import { randomBytes } from 'node:crypto';
import { settingDefaults } from '../../src/config.js';
import { startCosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import type { CosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import {
  loadOfficialEmulatorConfig,
  loadQueueFile,
  startServiceBusEmulator,
  toQueueSettings,
  toTopicConfig,
} from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { startCarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';

export interface LocalStack {
  readonly cosmos: CosmosStandIn;
  readonly serviceBus: ServiceBusEmulator;
  /** The carrier API requestShipment books with (emulators/carrier-emulator/). */
  readonly carrier: CarrierStandIn;
  /** The app settings that point the Functions app (or Core Tools) at this stack. */
  readonly settings: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

export interface LocalStackOptions {
  /** The emulators' usual ports (5672, 8081) instead of free ones. */
  readonly wellKnownPorts: boolean;
  /** Other fixed ports than the usual ones (tests). */
  readonly ports?: { readonly serviceBus?: number; readonly cosmos?: number; readonly carrier?: number };
  /** Overrides the queue file's lock duration, on queues and subscriptions (the demo plays crashed consumers, whose locks must run out quickly). */
  readonly lockDurationMs?: number;
  /** Microsoft's emulator's Config.json instead of infra/servicebus-queues.json (for its samples; the app needs the orders queue). */
  readonly serviceBusConfigPath?: string;
}

/** A component could not listen on its port: says which, which port, and what to do. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
}

async function onPort<T>(component: string, port: number, usualSuspect: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    throw new PortInUseError(
      `${component} cannot listen on port ${port}: it is in use (another \`npm run local -- --serve\`, or ${usualSuspect}?). ` +
        `Stop whatever holds it (\`lsof -i :${port}\` or \`ss -ltnp | grep ${port}\` names it), or run \`npm run local\`, which uses free ports.`,
    );
  }
}

export const localDatabase = 'orders';
export const localContainer = 'orders';
export const localLeasesContainer = 'leases';
/** Drawn once per process: every app process this stack starts gets the same one. */
const localRetryStateSigningKey = randomBytes(32).toString('base64url');

/** The carrier stand-in's key on its usual port (7080), so local.settings.sample.json works against `--serve`. */
export const localCarrierApiKey = 'local-carrier-key';

/** The subscriptions' locks shortened like the queues', for runs whose crashed consumers must let go quickly. */
function withLockDuration(topic: ReturnType<typeof toTopicConfig>, lockDurationMs: number | undefined): ReturnType<typeof toTopicConfig> {
  if (lockDurationMs === undefined) return topic;
  const subscriptions = Object.fromEntries(
    Object.entries(topic.subscriptions).map(([name, s]) => [name, { ...s, settings: { ...s.settings, lockDurationMs } }]),
  );
  return { ...topic, subscriptions };
}

/** Both stand-ins, with the queues and topics of infra/servicebus-queues.json and the container the Bicep creates. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const ports = {
    cosmos: options.ports?.cosmos ?? (options.wellKnownPorts ? 8081 : 0),
    serviceBus: options.ports?.serviceBus ?? (options.wellKnownPorts ? 5672 : 0),
  };
  const cosmos = await onPort('the Cosmos DB stand-in', ports.cosmos, 'the Cosmos DB emulator', () => startCosmosStandIn({ port: ports.cosmos }));
  const client = createCosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key });
  const { database } = await client.databases.createIfNotExists({ id: localDatabase });
  await database.containers.createIfNotExists({ id: localContainer, partitionKey: { paths: ['/orderId'] }, defaultTtl: -1 });
  // The Cosmos DB trigger's leases, partitioned by /id as the trigger requires (the Bicep creates the same).
  await database.containers.createIfNotExists({ id: localLeasesContainer, partitionKey: { paths: ['/id'] } });
  client.dispose();

  const file = loadQueueFile();
  const queues = Object.fromEntries(
    Object.entries(file.queues).map(([name, definition]) => {
      const settings = toQueueSettings(definition);
      return [name, options.lockDurationMs === undefined ? settings : { ...settings, lockDurationMs: options.lockDurationMs }];
    }),
  );
  const topics = Object.fromEntries(
    Object.entries(file.topics).map(([name, definition]) => [name, withLockDuration(toTopicConfig(definition), options.lockDurationMs)]),
  );
  const entities = options.serviceBusConfigPath ? loadOfficialEmulatorConfig(options.serviceBusConfigPath) : { queues, topics };
  // GET /health on 5300 like Microsoft's emulator, for scripts that wait for it (any free port otherwise).
  const healthPort = options.wellKnownPorts ? 5300 : 0;
  const serviceBus = await onPort('the Service Bus emulator', ports.serviceBus, "Microsoft's Service Bus emulator or another AMQP broker", () =>
    startServiceBusEmulator({ port: ports.serviceBus, healthPort, ...entities }),
  ).catch(async (error: unknown) => {
    await cosmos.close();
    throw error;
  });
  const carrierPort = options.ports?.carrier ?? (options.wellKnownPorts ? 7080 : 0);
  const carrier = await onPort('the carrier API stand-in', carrierPort, 'another local HTTP server', () =>
    startCarrierStandIn({ port: carrierPort, apiKey: options.wellKnownPorts ? localCarrierApiKey : undefined }),
  ).catch(async (error: unknown) => {
    await serviceBus.close();
    await cosmos.close();
    throw error;
  });
  const orders = file.queues.orders;
  const settings: Record<string, string> = {
    ServiceBusConnection: serviceBus.connectionString,
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: cosmos.endpoint,
    COSMOS_KEY: cosmos.key,
    COSMOS_DATABASE: localDatabase,
    COSMOS_ORDERS_CONTAINER: localContainer,
    COSMOS_LEASES_CONTAINER: localLeasesContainer,
    // The Cosmos DB trigger's own connection, as a connection string (an identity connection in Azure).
    CosmosDbConnection: `AccountEndpoint=${cosmos.endpoint};AccountKey=${cosmos.key};`,
    ORDER_EVENTS_TOPIC_NAME: 'order-events',
    FULFILMENT_SUBSCRIPTION_NAME: 'fulfilment',
    CARRIER_API_URL: carrier.url,
    // A plain setting locally; a Key Vault reference in Azure (infra/modules/keyVault.bicep).
    CARRIER_API_KEY: carrier.apiKey,
    // One random key for every process of this stack: each must verify the copies the others signed.
    RETRY_STATE_SIGNING_KEY: localRetryStateSigningKey,
    ...(orders
      ? {
          QUEUE_MAX_DELIVERY_COUNT: String(orders.maxDeliveryCount),
          QUEUE_LOCK_DURATION_SECONDS: String(orders.lockDurationSeconds),
          QUEUE_MESSAGE_TTL_SECONDS: String(orders.defaultMessageTimeToLiveSeconds),
        }
      : {}),
    LOCK_RENEWAL_MAX_SECONDS: String(file.operations.lockRenewalMaxSeconds),
    TRANSIENT_RETRY_BUDGET_SECONDS: String(file.operations.transientRetryBudgetSeconds),
    DLQ_RESUBMIT_HORIZON_SECONDS: String(file.operations.deadLetterResubmitHorizonSeconds),
    INBOX_MARKER_TTL_SECONDS: String(file.operations.inboxMarkerTtlSeconds),
    PARKED_SWEEP_SCHEDULE: settingDefaults.PARKED_SWEEP_SCHEDULE,
    OUTBOX_SWEEP_SCHEDULE: settingDefaults.OUTBOX_SWEEP_SCHEDULE,
    SHIPMENT_RECONCILE_SCHEDULE: settingDefaults.SHIPMENT_RECONCILE_SCHEDULE,
  };
  return {
    cosmos,
    serviceBus,
    carrier,
    settings,
    async close() {
      await carrier.close();
      await serviceBus.close();
      await cosmos.close();
    },
  };
}
