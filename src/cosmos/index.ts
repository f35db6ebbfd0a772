export { createCosmosClient, isLoopbackEndpoint } from './client.js';
export type { CosmosConnectionOptions } from './client.js';
export { CosmosDocumentStore } from './cosmosDocumentStore.js';
// The id encoding lives in the core (it imports nothing of Azure); re-exported for the adapter's users.
export { documentId, escapeIdPart, isCosmosSafeId, maxCosmosIdLength } from '../idempotency/index.js';
export { classifyStoreFailure, statusCodeOf } from './storeErrors.js';
