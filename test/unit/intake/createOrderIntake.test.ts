import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { createOrderIntake, orderIntakeClaimId } from '../../../src/intake/index.js';
import { orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';
import { TestMetricReader } from '../../support/testMetricReader.js';

// The composition root: the intake the function app builds from its settings, with the store,
// clock and meter a host (or a test) hands it, and the real ones when it hands none.
const settings = loadSettings({
  ServiceBusConnection: 'Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=k',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
  RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
});
const accept = (intake: ReturnType<typeof createOrderIntake>, orderId: string) =>
  intake.handle(orderRequest(`k-${orderId}`, orderPlaced(orderId)), { invocationId: 'invocation-1', log: new RecordingLog() });

describe('createOrderIntake', () => {
  it('accepts into the store it is given, at the time of the clock it is given, and counts the request on the meter it is given', async () => {
    const store = new InMemoryDocumentStore();
    const reader = new TestMetricReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
    const intake = createOrderIntake(settings, { store, now: () => new Date('2026-12-01T10:00:00Z'), meter });

    const answer = await accept(intake, 'o-1');

    expect(answer).toMatchObject({ status: 202, body: { orderId: 'o-1', acceptedAt: '2026-12-01T10:00:00.000Z' } });
    expect((await store.read('o-1', orderIntakeClaimId('o-1')))?.document).toMatchObject({ orderId: 'o-1', acceptedAt: '2026-12-01T10:00:00.000Z' });
    const { resourceMetrics } = await reader.collect();
    const requests = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'orders.requests');
    expect(requests?.dataPoints.map((p) => [p.attributes.outcome, p.value])).toEqual([['created', 1]]);
  });

  it('stamps an acceptance with the real time when given no clock', async () => {
    const store = new InMemoryDocumentStore();
    const before = Date.now();

    const answer = await accept(createOrderIntake(settings, { store }), 'o-2');

    const acceptedAt = Date.parse((answer.body as { acceptedAt: string }).acceptedAt);
    expect(acceptedAt).toBeGreaterThanOrEqual(before);
    expect(acceptedAt).toBeLessThanOrEqual(Date.now());
  });
});
