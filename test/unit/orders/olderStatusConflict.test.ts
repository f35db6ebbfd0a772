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
    expect(t.memory.list(rejectedMessagesPartition).length + t.memory.list('o1').filter((d) => (d as { docType?: string }).docType === 'rejection').length).toBeGreaterThan(0);
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
