export { createCosmosClient, isLoopbackEndpoint } from './client.js';
export type { CosmosConnectionOptions } from './client.js';
export { CosmosDocumentStore } from './cosmosDocumentStore.js';
export { documentId, escapeIdPart, isCosmosSafeId, maxCosmosIdLength } from './documentIds.js';
export { classifyStoreFailure, statusCodeOf } from './storeErrors.js';
