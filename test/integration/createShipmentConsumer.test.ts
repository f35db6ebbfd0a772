import type { Container, CosmosClient } from '@azure/cosmos';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import { loadSettings } from '../../src/config.js';
import { ConfigurationError } from '../../src/configurationError.js';
import type { DocumentStore } from '../../src/idempotency/index.js';
import { createShipmentConsumer, createShipmentReconciler, parseShipmentEvent, shipmentRecordId } from '../../src/shipments/index.js';
import type { ShipmentRecord } from '../../src/shipments/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { RecordingLog } from '../support/recordingLog.js';
import { TestClock, cosmosStore, storedOrderWithEvent } from '../support/shipmentHarness.js';
import type { EventDelivery } from '../support/shipmentHarness.js';
import { TestMetricReader } from '../support/testMetricReader.js';

// The factory the requestShipment function calls: what it takes from the settings, not from the test.
let client: CosmosClient;
let container: Container;
let store: DocumentStore;
let carrier: CarrierStandIn;

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  store = cosmosStore(container);
  carrier = await startCarrierStandIn();
});

afterAll(async () => {
  await container.delete();
  client.dispose();
  await carrier.close();
});

function settingsWith(extra: Record<string, string | undefined>) {
  const env: Record<string, string | undefined> = { ...process.env, CARRIER_API_URL: carrier.url, CARRIER_API_KEY: carrier.apiKey, ...extra };
  for (const [name, value] of Object.entries(extra)) if (value === undefined) delete env[name];
  return loadSettings(env);
}

async function recordOf(delivery: EventDelivery): Promise<ShipmentRecord | undefined> {
  const key = parseShipmentEvent(delivery.envelope, delivery.body, 1 << 20).key;
  return (await store.read<ShipmentRecord>(delivery.orderId, shipmentRecordId(key)))?.document;
}

describe('createShipmentConsumer: the consumer built from settings', () => {
  it('books with the carrier at CARRIER_API_URL and CARRIER_API_KEY, under a lease of SHIPMENT_LEASE_SECONDS, and counts a shipment-message line', async () => {
    const clock = new TestClock();
    const reader = new TestMetricReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
    const consumer = createShipmentConsumer(settingsWith({ SHIPMENT_LEASE_SECONDS: '90' }), { store, now: clock.now, meter });
    const delivery = await storedOrderWithEvent(store, clock.now());
    const log = new RecordingLog();
    const result = await consumer.consume(delivery.envelope, delivery.body, log, { invocationId: 'i-1' });
    expect(result.outcome.kind).toBe('created');
    // The stand-in answers 401 to any other key, so a booking proves the key was sent.
    expect(carrier.bookings().filter((b) => b.orderReference === delivery.orderId)).toHaveLength(1);
    const record = await recordOf(delivery);
    expect(record).toMatchObject({
      state: 'completed',
      startedAt: clock.now().toISOString(),
      leaseExpiresAt: new Date(clock.now().getTime() + 90_000).toISOString(),
    });
    expect(log.lines.map((l) => l.record.event)).toEqual(['shipment-message']);
    const { resourceMetrics } = await reader.collect();
    const counted = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'orders.messages');
    expect(counted?.dataPoints.map((p) => [p.attributes.outcome, p.value])).toEqual([['created', 1]]);
  });

  it('runs on the machine clock and the global meter when given neither', async () => {
    const consumer = createShipmentConsumer(settingsWith({}), { store });
    const delivery = await storedOrderWithEvent(store, new Date());
    const before = Date.now();
    const result = await consumer.consume(delivery.envelope, delivery.body, new RecordingLog(), { invocationId: 'i-2' });
    expect(result.outcome.kind).toBe('created');
    const startedAt = Date.parse((await recordOf(delivery))?.startedAt ?? '');
    expect(startedAt).toBeGreaterThanOrEqual(before);
    expect(startedAt).toBeLessThanOrEqual(Date.now());
  });

  it.each([
    ['createShipmentConsumer', () => createShipmentConsumer(settingsWith({ CARRIER_API_URL: undefined }), { store })],
    ['createShipmentReconciler', () => createShipmentReconciler(settingsWith({ CARRIER_API_URL: undefined }), { store })],
  ])('%s without CARRIER_API_URL is refused at start-up, naming the setting and who needs it', (_name, build) => {
    let thrown: unknown;
    try {
      build();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as ConfigurationError).problems).toEqual([
      { setting: 'CARRIER_API_URL', problem: 'is required by requestShipment and reconcileShipments (the carrier API they book with)' },
    ]);
  });

  it('takes a given carrier client instead of building one, so CARRIER_API_URL is then not needed', () => {
    const carrierClient = { book: () => Promise.reject(new Error('unused')), lookup: () => Promise.reject(new Error('unused')) };
    expect(() => createShipmentConsumer(settingsWith({ CARRIER_API_URL: undefined }), { store, carrier: carrierClient })).not.toThrow();
  });
});
