// The bare consumer of `npm run bench -- --host`: what the Functions host does for processOrder
// (one ServiceBusReceiver on the orders queue, host.json's maxConcurrentCalls and lock renewal, the
// message completed when the handler returns and abandoned when it throws) around the path's minimal
// store work (bench/hostBareWork.ts) instead of the app.
import { Agent } from 'node:https';
import { CosmosClient } from '@azure/cosmos';
import type { Container } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusHostOptions } from '../emulators/functions-host/hostSettings.js';
import { bareWorkFor } from './hostBareWork.js';
import { preciseNow } from './hostLines.js';

export interface DrainTally {
  firstAt?: number;
  deliveries: number;
  failed: number;
}

const setting = (settings: Readonly<Record<string, string>>, name: string): string => {
  const value = settings[name];
  if (!value) throw new Error(`bare host loop: setting ${name} is not set`);
  return value;
};

/** The bare loop's container: one client for the process's life, as the app keeps its own from load to exit. */
export function bareContainer(settings: Readonly<Record<string, string>>): Container {
  const cosmos = new CosmosClient({
    endpoint: setting(settings, 'COSMOS_ENDPOINT'),
    key: setting(settings, 'COSMOS_KEY'),
    connectionPolicy: { enableEndpointDiscovery: false },
    agent: new Agent({ keepAlive: true, rejectUnauthorized: false }),
  });
  return cosmos.database(setting(settings, 'COSMOS_DATABASE')).container(setting(settings, 'COSMOS_ORDERS_CONTAINER'));
}

/** Starts receiving, with a Service Bus client of its own as the host makes one when it starts; resolves with how to stop. */
export async function startBareConsumer(
  container: Container,
  settings: Readonly<Record<string, string>>,
  host: ServiceBusHostOptions,
  path: string,
  tally: DrainTally,
): Promise<() => Promise<void>> {
  const work = bareWorkFor(path);
  const bus = new ServiceBusClient(setting(settings, 'ServiceBusConnection'));
  const receiver = bus.createReceiver(setting(settings, 'ORDERS_QUEUE_NAME'), { maxAutoLockRenewalDurationInMs: host.maxAutoLockRenewalDurationMs });
  receiver.subscribe(
    {
      processMessage: async (m) => {
        tally.firstAt ??= preciseNow();
        tally.deliveries += 1;
        // The SDK's count is of earlier failed deliveries: above 0, an earlier attempt may have written.
        await work(container, String(m.messageId), m.body, (m.deliveryCount ?? 0) > 0).catch((error: unknown) => {
          tally.failed += 1;
          throw error;
        });
      },
      processError: async () => {},
    },
    { autoCompleteMessages: host.autoCompleteMessages, maxConcurrentCalls: host.maxConcurrentCalls },
  );
  return async () => {
    await receiver.close();
    await bus.close();
  };
}
