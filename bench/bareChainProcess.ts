// The bare chain of `npm run bench -- --chain`, in its own OS process as the app's host is in its own:
// an HTTP handler for POST /api/orders, a receiver on the orders queue and one on the fulfilment
// subscription, each with the host's concurrency (host.json), doing bareChainWork.ts's store and broker
// work. Settings come from the environment under the app's names. Prints one ready line with its URL.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { readHostJson } from '../emulators/functions-host/hostSettings.js';
import { bareIntake, bareProcessOrder, bareRequestShipment } from './bareChainWork.js';
import type { BareChainContext, BareOrder } from './bareChainWork.js';
import { deliveryLine, readyLine } from './chainProcess.js';

const maxBodyBytes = 64 * 1024;
const setting = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`bare chain: setting ${name} is not set`);
  return value;
};

async function main(): Promise<void> {
  const host = readHostJson(join(__dirname, '..'));
  const cosmos = new CosmosClient({
    endpoint: setting('COSMOS_ENDPOINT'),
    key: setting('COSMOS_KEY'),
    connectionPolicy: { enableEndpointDiscovery: false },
    agent: new Agent({ keepAlive: true, rejectUnauthorized: false }),
  });
  const bus = new ServiceBusClient(setting('ServiceBusConnection'));
  const ctx: BareChainContext = {
    container: cosmos.database(setting('COSMOS_DATABASE')).container(setting('COSMOS_ORDERS_CONTAINER')),
    ordersQueue: bus.createSender(setting('ORDERS_QUEUE_NAME')),
    orderEvents: bus.createSender(setting('ORDER_EVENTS_TOPIC_NAME')),
    carrier: { url: setting('CARRIER_API_URL'), apiKey: setting('CARRIER_API_KEY') },
  };
  const receiverOptions = { maxAutoLockRenewalDurationInMs: host.maxAutoLockRenewalDurationMs };
  const subscribe = (fn: 'processOrder' | 'requestShipment', receiver: ServiceBusReceiver, handle: (m: ServiceBusReceivedMessage) => Promise<void>) =>
    receiver.subscribe(
      {
        processMessage: async (m) => {
          const failed = await handle(m).then(
            () => false,
            (error: unknown) => (console.error(`bare chain: ${fn} ${String(m.messageId)} failed: ${String(error)}`), true),
          );
          process.stdout.write(
            deliveryLine({ fn, orderId: m.sessionId, enqueuedAt: m.enqueuedTimeUtc?.getTime(), deliveryCount: (m.deliveryCount ?? 0) + 1, failed }),
          );
          // As the host does: a failed invocation abandons the message.
          if (failed) throw new Error(`${fn} failed`);
        },
        processError: async (args) => console.error(`bare chain: ${String(args.error)}`),
      },
      { autoCompleteMessages: true, maxConcurrentCalls: host.maxConcurrentCalls },
    );
  subscribe('processOrder', bus.createReceiver(setting('ORDERS_QUEUE_NAME'), receiverOptions), (m) =>
    bareProcessOrder(ctx, m.body as BareOrder, String(m.messageId)),
  );
  subscribe('requestShipment', bus.createReceiver(setting('ORDER_EVENTS_TOPIC_NAME'), setting('FULFILMENT_SUBSCRIPTION_NAME'), receiverOptions), (m) => {
    const key = `${String(m.applicationProperties?.['cloudEvents:source'])}|${String(m.applicationProperties?.['cloudEvents:id'])}`;
    return bareRequestShipment(ctx, m.body as { orderId: string; customerId: string; currency: string; total: number }, key);
  });
  const server = createServer((req, res) => void handle(ctx, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(readyLine(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`));
}

async function handle(ctx: BareChainContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const answer = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  if (req.method !== 'POST' || req.url !== '/api/orders') return void answer(404, { title: 'not found' });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) return void answer(413, { title: 'too large' });
    chunks.push(chunk as Buffer);
  }
  const key = String(req.headers['idempotency-key'] ?? '').replace(/^"(.*)"$/, '$1');
  try {
    const result = await bareIntake(ctx, key, Buffer.concat(chunks).toString('utf8'));
    answer(result.status, result.body);
    await result.publish();
  } catch (error) {
    if (!res.headersSent) answer(503, { title: String(error) });
    else console.error(`bare chain: publishing after the answer failed: ${String(error)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
