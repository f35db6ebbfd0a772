import { describe, expect, it } from 'vitest';
import { rejectedMessagesPartition } from '../../../src/orders/index.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged } from '../../support/orderMessages.js';

// Absolute state with a version: two different states under one version are a producer's conflict,
// whether the version is the newest stored or an older one the order remembers.
describe('a status change at an older version', () => {
  it('with another status than the one applied at that version is a conflict, recorded with both fingerprints', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'));
    await t.send('st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped'));
    const outcome = (await t.send('st-2-edited', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Cancelled'))).outcome;
    expect(outcome).toMatchObject({ kind: 'conflict' });
    const conflicts = t.memory.list('o1').filter((d) => (d as { docType?: string }).docType === 'conflict');
    expect(conflicts).toHaveLength(1);
    expect(
      t.memory.list(rejectedMessagesPartition('st-2-edited')).length +
        t.memory.list('o1').filter((d) => (d as { docType?: string }).docType === 'rejection').length,
    ).toBeGreaterThan(0);
    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 3 });
  });

  it('with the status applied at that version is stale, as before', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'));
    await t.send('st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped'));
    expect((await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'), 2)).outcome).toEqual({ kind: 'stale', storedVersion: 3 });
  });

  it('parked beside another status at the same version, is a conflict at once, and the order applies the first', async () => {
    const t = orderFlow();
    await t.send('st-3', 'OrderStatusChanged', orderStatusChanged('o1', 3, 'Shipped'));
    await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'));
    expect((await t.send('st-2-edited', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Cancelled'))).outcome).toMatchObject({ kind: 'conflict' });
    const placed = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(placed.outcome).toMatchObject({ kind: 'created' });
    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 3 });
  });
});

describe('the status versions an order remembers', () => {
  it('are the last 16 applied, so the document stays bounded; older ones are only stale', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    for (let version = 1; version <= 20; version += 1) await t.send(`st-${version}`, 'OrderStatusChanged', orderStatusChanged('o1', version, 'Paid'));
    const order = await t.order('o1');
    expect(
      Object.keys(order?.statusHistory ?? {})
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect((await t.send('st-4-edited', 'OrderStatusChanged', orderStatusChanged('o1', 4, 'Cancelled'))).outcome).toEqual({ kind: 'stale', storedVersion: 20 });
    expect((await t.send('st-5-edited', 'OrderStatusChanged', orderStatusChanged('o1', 5, 'Cancelled'))).outcome).toMatchObject({ kind: 'conflict' });
  });
});
