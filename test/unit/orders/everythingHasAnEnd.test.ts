import { describe, expect, it } from 'vitest';
import { rejectedMessagesPartition, rejectionDocumentId, sweepParkedItems } from '../../../src/orders/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// What a sender can make the app write has an end: every record of a conflict, a rejection or an
// early arrival carries a time-to-live, and a sweep run reads a bounded page, oldest first.
const ttlOf = (document: unknown) => (document as { ttl?: number } | undefined)?.ttl;

describe('records a sender can cause, each with a time-to-live', () => {
  it('a conflict document and its rejection record expire with the marker retention', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1', { customerId: 'someone-else' }))).outcome.kind).toBe('conflict');
    const recorded = t.memory.list('o1').filter((d) => ['conflict', 'rejection'].includes((d as { docType?: string }).docType ?? ''));
    expect(recorded.map((d) => [(d as unknown as { docType: string }).docType, ttlOf(d)]).sort()).toEqual([
      ['conflict', 3600],
      ['rejection', 3600],
    ]);
    t.advance(3600);
    expect(t.memory.list('o1').filter((d) => ['conflict', 'rejection'].includes((d as { docType?: string }).docType ?? ''))).toEqual([]);
  });

  it("an invalid message's rejection expires, in its own #rejected-<n> partition", async () => {
    const t = orderFlow();
    expect((await t.send('junk-1', 'PaymentReceived', { orderId: 'o1' })).outcome.kind).toBe('invalid');
    expect(ttlOf((await t.memory.read(rejectedMessagesPartition('junk-1'), rejectionDocumentId('junk-1')))?.document)).toBe(3600);
  });

  it('an orphan payment, its arrival gate and, once rejected, the rejected item each expire', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-orphan', 'PaymentReceived', paymentReceived('never'));
    expect(
      t.memory
        .list('never')
        .map((d) => [(d as unknown as { docType: string }).docType, ttlOf(d)])
        .sort(),
    ).toEqual([
      ['parked', parkedItemTtlSeconds],
      ['parking-lot', parkedItemTtlSeconds],
    ]);
    t.advance(3601);
    expect((await sweepParkedItems(t.ctx, { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 10 })).rejected).toHaveLength(1);
    expect(t.parked('never')).toEqual([expect.objectContaining({ state: 'rejected', ttl: parkedItemTtlSeconds })]);
    // The rejection's write starts the item's TTL again: it outlives the gate by the horizon, then both are gone.
    t.advance(parkedItemTtlSeconds);
    expect(t.memory.list('never')).toEqual([]);
  });

  it('a payment rejected by its order (another currency) expires', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-usd', 'PaymentReceived', paymentReceived('o1', { currency: 'USD' }));
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'rejected', ttl: parkedItemTtlSeconds })]);
  });
});

describe('the parked-item sweeper reads a bounded page per run', () => {
  it('reads at most maxItemsPerRun, oldest first, goes on from there next run, and starts over after a short page', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    for (let i = 0; i < 5; i += 1) {
      await t.send(`pay-${i}`, 'PaymentReceived', paymentReceived(`orphan-${i}`));
      t.advance(1);
    }
    t.advance(120);
    const options = { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 2 };
    const reads: string[][] = [];
    let after: string | undefined;
    for (let run = 0; run < 4; run += 1) {
      const before = t.memory.list('orphan-0').length;
      const result = await sweepParkedItems(t.ctx, { ...options, ...(after === undefined ? {} : { after }) });
      expect(before).toBeGreaterThan(0);
      reads.push(await orphansRead(result.examined, after, t.ctx.store));
      after = result.nextAfter;
    }
    expect(reads.map((r) => r.length)).toEqual([2, 2, 1, 2]);
    expect(reads.slice(0, 3).flat()).toEqual(['orphan-0', 'orphan-1', 'orphan-2', 'orphan-3', 'orphan-4']);
    expect(reads[3]).toEqual(['orphan-0', 'orphan-1']);
  });
});

/** Which orders the sweep's page held: the `examined` oldest after the cursor, as the store orders them. */
async function orphansRead(examined: number, after: string | undefined, store: ReturnType<typeof orderFlow>['ctx']['store']): Promise<string[]> {
  const page = await store.find<ParkedItemDocument>({
    docType: 'parked',
    equals: { state: 'parked' },
    orderBy: 'parkedAt',
    ...(after === undefined ? {} : { after: { field: 'parkedAt', value: after } }),
    limit: examined,
  });
  return page.map((p) => p.document.orderId);
}
