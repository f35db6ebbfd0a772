import { existsSync } from 'node:fs';
import { z } from 'zod';
import { optionalText, readElsewhere, requiredText, textWithDefault, withRule } from './settingKinds.js';

/** Where the app finds Service Bus and Cosmos DB, and the names of what it uses there. */
export const connectionSettings = {
  ServiceBusConnection: optionalText({
    table: 'app',
    readBy: ['host', 'app'],
    secret: true,
    localValue: 'Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true',
    description: 'Service Bus connection string (local, emulator). Either this or the next is required.',
  }),
  ServiceBusConnection__fullyQualifiedNamespace: optionalText({
    table: 'app',
    readBy: ['host', 'app'],
    localValue: null,
    description:
      '`<namespace>.servicebus.windows.net`, with managed identity (Azure). Add `ServiceBusConnection__credential=managedidentity` and `ServiceBusConnection__clientId` for a user-assigned identity. The app sends its delayed-retry copies through the same connection.',
  }),
  ServiceBusConnection__clientId: optionalText({
    table: 'app',
    readBy: ['host', 'app'],
    localValue: null,
    description: 'The client id of the user-assigned identity the connection uses (Azure), beside `ServiceBusConnection__credential=managedidentity`.',
  }),
  ORDERS_QUEUE_NAME: requiredText('is required (the queue the trigger listens to)', {
    table: 'app',
    readBy: ['host', 'app', 'operator tool'],
    localValue: 'orders',
    description: 'The queue the trigger listens to.',
  }),
  COSMOS_ENDPOINT: withRule(() => z.url({ protocol: /^https$/, error: 'must be an https:// URL such as https://myaccount.documents.azure.com:443/' }), {
    table: 'app',
    readBy: ['app', 'operator tool'],
    unit: 'URL',
    defaultText: '— (required)',
    localValue: 'https://127.0.0.1:8081/',
    description: '`https://<account>.documents.azure.com:443/`, or `https://127.0.0.1:8081/` locally. Must be https.',
  }),
  COSMOS_KEY: optionalText({
    table: 'app',
    readBy: ['app', 'operator tool'],
    secret: true,
    localValue: 'C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==',
    description: 'Account key. Without it the app uses Entra ID (`DefaultAzureCredential`; `AZURE_CLIENT_ID` picks a user-assigned identity).',
  }),
  COSMOS_CA_CERT_PATH: withRule(
    () =>
      z
        .string()
        .trim()
        .min(1)
        .optional()
        .refine((path) => path === undefined || existsSync(path), 'names a file that does not exist'),
    {
      table: 'app',
      readBy: ['app'],
      unit: 'path',
      localValue: null,
      description: "PEM of a CA to trust for the Cosmos endpoint only (e.g. the emulator's exported certificate).",
    },
  ),
  COSMOS_DATABASE: textWithDefault('orders', {
    table: 'app',
    readBy: ['host', 'app', 'operator tool'],
    description: 'Database name.',
  }),
  COSMOS_ORDERS_CONTAINER: textWithDefault('orders', {
    table: 'app',
    readBy: ['host', 'app', 'operator tool'],
    description: 'Container, partition key `/orderId`, TTL on with no default (`defaultTtl: -1`).',
  }),
  COSMOS_LEASES_CONTAINER: textWithDefault('leases', {
    table: 'app',
    readBy: ['host', 'app', 'operator tool'],
    description:
      "The outbox publisher's leases (partition key `/id`), beside the orders container. **Required by the host** (the trigger reads `%COSMOS_LEASES_CONTAINER%`, as it reads `%COSMOS_DATABASE%` and `%COSMOS_ORDERS_CONTAINER%`).",
  }),
  CosmosDbConnection: readElsewhere({
    table: 'app',
    readBy: ['host'],
    secret: true,
    localValue: 'AccountEndpoint=https://127.0.0.1:8081/;AccountKey=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==;',
    description:
      "The outbox publisher's Cosmos DB trigger connection, read by the host, not the app: `AccountEndpoint=...;AccountKey=...;` locally; in Azure `CosmosDbConnection__accountEndpoint` with `__credential=managedidentity` and `__clientId` (the Bicep sets them).",
  }),
  ORDER_EVENTS_TOPIC_NAME: textWithDefault('order-events', {
    table: 'app',
    readBy: ['host', 'app', 'operator tool'],
    description: 'The topic OrderAccepted events are published to (written into each outbox entry).',
  }),
  CONSUMER_NAME: optionalText({
    table: 'app',
    readBy: ['app', 'operator tool'],
    description: 'Prefix that makes keys composite when consumers share a container.',
  }),
};
