import { inject } from 'vitest';

// What the function app reads at start-up, pointed at this run's Cosmos stand-in.
// Each worker gets its own database, so test files never see each other's documents.
process.env.ServiceBusConnection = 'Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true';
process.env.ORDERS_QUEUE_NAME = 'orders';
process.env.COSMOS_ENDPOINT = inject('cosmosEndpoint');
process.env.COSMOS_KEY = inject('cosmosKey');
process.env.COSMOS_DATABASE = `test-${process.env.VITEST_POOL_ID ?? '0'}-${process.pid}`;
process.env.COSMOS_ORDERS_CONTAINER = 'orders';
// Tests see each delivery's own outcome; the suites for the retry layers turn them on themselves.
process.env.TRANSIENT_RETRY_IN_INVOCATION_MS = '0';
process.env.DELAYED_RETRY_ENABLED = 'false';
// Delayed-retry copies are signed: a fixed test key (never a deployed one).
process.env.RETRY_STATE_SIGNING_KEY = 'test-retry-state-signing-key-0123456789abcdef';
