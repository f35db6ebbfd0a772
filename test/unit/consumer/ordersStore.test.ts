import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config.js';
import { ordersStore } from '../../../src/consumer/index.js';

const settingsFor = (container: string, database = 'orders') =>
  loadSettings({
    ServiceBusConnection: 'Endpoint=sb://127.0.0.1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true',
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    COSMOS_KEY: 'a2V5',
    RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
    COSMOS_DATABASE: database,
    COSMOS_ORDERS_CONTAINER: container,
  });

describe('ordersStore', () => {
  it('gives every function of the process one store (and one Cosmos client) per container', () => {
    const first = ordersStore(settingsFor('unit-orders-a'));
    expect(ordersStore(settingsFor('unit-orders-a'))).toBe(first);
    expect(ordersStore(settingsFor('unit-orders-b'))).not.toBe(first);
    expect(ordersStore(settingsFor('unit-orders-a', 'other-db'))).not.toBe(first);
  });
});
