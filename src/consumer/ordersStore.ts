import type { Settings } from '../config.js';
import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import type { DocumentStore } from '../idempotency/index.js';

const stores = new Map<string, DocumentStore>();

/**
 * One Cosmos client per process and container, whichever functions ask: the SDK keeps connections
 * and partition maps per client, and two clients would hold two of each.
 */
export function ordersStore(settings: Settings): DocumentStore {
  const { endpoint, databaseName, ordersContainerName } = settings.cosmos;
  const key = `${endpoint}|${databaseName}|${ordersContainerName}`;
  let store = stores.get(key);
  if (!store) {
    store = new CosmosDocumentStore(createCosmosClient(settings.cosmos).database(databaseName).container(ordersContainerName));
    stores.set(key, store);
  }
  return store;
}
