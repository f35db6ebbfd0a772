import { describe, expect, it } from 'vitest';
import { replace } from '../../../src/idempotency/index.js';
import { findRejectionRecord, rejectedMessagesPartition, rejectionDocumentId, sweepParkedItems } from '../../../src/orders/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { touches } from '../../support/interleavingStore.js';
import { flowStartMs, orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { paymentReceived } from '../../support/orderMessages.js';

// The sweeper's clock edges and the writers it meets: what is too young to look at, what waits
// exactly the horizon, which age the alert reports, and an item applied while it is being rejected.
const sweepOptions = { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 100 };

describe('the parked-item sweeper, at its edges', () => {
  it('leaves items younger than the minimum age to their order, and looks at them once they are older', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-1', 'PaymentReceived', paymentReceived('w1'));
    t.advance(59);
    expect(await sweepParkedItems(t.ctx, sweepOptions)).toEqual({ examined: 0, applied: 0, rejected: [], oldestParkedAgeSeconds: 0 });
    t.advance(2);
    expect(await sweepParkedItems(t.ctx, sweepOptions)).toMatchObject({ examined: 1, oldestParkedAgeSeconds: 61 });
  });

  it('rejects only what waited longer than the horizon: an item parked exactly the horizon ago still waits', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-1', 'PaymentReceived', paymentReceived('w1'));
    t.advance(3600);
    expect(await sweepParkedItems(t.ctx, sweepOptions)).toMatchObject({ examined: 1, rejected: [], oldestParkedAgeSeconds: 3600 });
    t.advance(1);
    const swept = await sweepParkedItems(t.ctx, sweepOptions);
    const description = `PaymentReceived pay-1 waited since ${new Date(flowStartMs).toISOString()} for order w1, which was not stored within 3600 s (PARKED_ITEM_HORIZON_SECONDS)`;
    expect(swept.rejected).toEqual([expect.objectContaining({ reason: 'OrderNeverArrived', description })]);
  });

  it('reports the age of the oldest item left waiting, whichever order the query returns them in', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-young', 'PaymentReceived', paymentReceived('w1'));
    t.advance(-500);
    await t.send('pay-old', 'PaymentReceived', paymentReceived('w2'));
    t.advance(500);
    await t.send('pay-mid', 'PaymentReceived', paymentReceived('w3'));
    t.advance(1000);
    // w2's item was parked 1500 s ago (first in no query order: it was written second).
    expect((await sweepParkedItems(t.ctx, sweepOptions)).oldestParkedAgeSeconds).toBe(1500);
  });

  it('does not report as rejected an item applied or changed while it was being rejected', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-1', 'PaymentReceived', paymentReceived('w1'));
    t.advance(7200);
    const [item] = t.parked('w1');
    t.store.beforeCommit(touches('parked'), async () => {
      const stored = await t.memory.read<ParkedItemDocument>('w1', item!.id);
      const resubmitted: ParkedItemDocument = { ...stored!.document, parkedAt: new Date(flowStartMs + 7_200_000).toISOString() };
      await t.memory.commit('w1', [replace(resubmitted, stored!.etag)]);
    });
    expect((await sweepParkedItems(t.ctx, sweepOptions)).rejected).toEqual([]);
    expect(t.parked('w1')[0]).toMatchObject({ state: 'parked' });
  });
});

describe('finding a rejection record', () => {
  it('takes the one under #rejected-<n> first, even when the message names an order', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    expect((await t.send('m-bad', 'OrderPlaced', { orderId: 'o1' })).outcome.kind).toBe('invalid');
    expect(await t.memory.read(rejectedMessagesPartition('m-bad'), rejectionDocumentId('m-bad'))).toBeDefined();
    expect(await findRejectionRecord(t.memory, 'm-bad', 'o1')).toMatchObject({ messageId: 'm-bad', reason: 'SchemaViolation' });
  });
});
