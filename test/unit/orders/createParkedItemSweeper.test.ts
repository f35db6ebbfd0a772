import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config.js';
import { replace } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { createParkedItemSweeper } from '../../../src/orders/index.js';
import { touches } from '../../support/interleavingStore.js';
import { flowStartMs, leftParked, orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';

// The sweeper's composition root over the in-memory store: the page it goes on from between runs,
// the clock and the sleeper it is given (or the real ones when none is).
const settings = (env: Record<string, string> = {}) =>
  loadSettings({
    ServiceBusConnection: 'Endpoint=sb://127.0.0.1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true',
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    COSMOS_KEY: 'a2V5',
    RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
    COSMOS_DATABASE: 'orders',
    COSMOS_ORDERS_CONTAINER: 'orders',
    PARKED_ITEM_HORIZON_SECONDS: '3600',
    PARKED_SWEEP_MIN_AGE_SECONDS: '60',
    ...env,
  });
const meter = () => new MeterProvider().getMeter('unit');

describe('createParkedItemSweeper', () => {
  it("goes on from where the last run's full page ended, and wraps to the oldest once a page is short", async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await leftParked(t, 'w-old', 'pay-old', 'PaymentReceived', paymentReceived('w-old'), flowStartMs);
    await leftParked(t, 'w-new', 'pay-new', 'PaymentReceived', paymentReceived('w-new'), flowStartMs + 100_000);
    t.advance(1000);
    const sweeper = createParkedItemSweeper(settings({ SWEEP_MAX_ITEMS_PER_RUN: '1' }), { store: t.store, now: t.ctx.now, meter: meter() });
    // Both wait within the horizon, so each run's page is the one item it reached.
    expect(await sweeper.sweep(new RecordingLog())).toMatchObject({ examined: 1, oldestParkedAgeSeconds: 1000 });
    expect(await sweeper.sweep(new RecordingLog())).toMatchObject({ examined: 1, oldestParkedAgeSeconds: 900 });
    expect(await sweeper.sweep(new RecordingLog())).toMatchObject({ examined: 0, oldestParkedAgeSeconds: 0 });
    expect(await sweeper.sweep(new RecordingLog())).toMatchObject({ examined: 1, oldestParkedAgeSeconds: 1000 });
  });

  it('pauses through the sleeper it is given after a lost race, never a real timer', async () => {
    const pauses: number[] = [];
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('place-1', 'OrderPlaced', orderPlaced('w1'));
    await leftParked(t, 'w1', 'pay-1', 'PaymentReceived', paymentReceived('w1'));
    t.advance(120);
    // Another writer changes the order just before the sweep's first write of the parked item.
    t.store.beforeCommit(touches('parked'), async () => {
      const order = await t.memory.read<OrderDocument>('w1', 'w1');
      await t.memory.commit('w1', [replace(order!.document, order!.etag)]);
    });
    const sweeper = createParkedItemSweeper(settings(), {
      store: t.store,
      now: t.ctx.now,
      sleep: (ms) => (pauses.push(ms), Promise.resolve()),
      meter: meter(),
    });
    expect(await sweeper.sweep(new RecordingLog())).toMatchObject({ applied: 1, rejected: [] });
    expect(pauses).toHaveLength(1);
  });

  it('reads the wall clock when it is given none', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await leftParked(t, 'w1', 'pay-1', 'PaymentReceived', paymentReceived('w1'), Date.now() - 7200_000);
    const sweeper = createParkedItemSweeper(settings(), { store: t.store, meter: meter() });
    const swept = await sweeper.sweep(new RecordingLog());
    expect(swept.rejected).toEqual([expect.objectContaining({ orderId: 'w1', reason: 'OrderNeverArrived' })]);
  });
});
