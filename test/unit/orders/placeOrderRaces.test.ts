import { describe, expect, it } from 'vitest';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import { parkingLotId } from '../../../src/orders/index.js';
import type { ParkingLotDocument } from '../../../src/orders/index.js';
import { AnsweringStore } from '../../support/answeringStore.js';
import { orderFlow, touchGate } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

// The OrderPlaced batch over parked items, and the writers that come between its read of the
// partition and its write: parkers, a twin copy of the message. Each is put exactly in that gap.
type Flow = ReturnType<typeof orderFlow>;
const createsOrder = (_pk: string, operations: readonly WriteOperation[]) =>
  operations[0]?.kind === 'create' && (operations[0].document as { docType?: string }).docType === 'order';
const overParked = (pk: string, operations: readonly WriteOperation[]) => createsOrder(pk, operations) && operations.some((op) => op.kind === 'replace');
const orderBatches = (t: Flow) => t.store.commitLog.filter((c) => createsOrder(c.partitionKey, c.operations)).length;

async function lotOf(t: Flow): Promise<ParkingLotDocument | undefined> {
  return (await t.memory.read<ParkingLotDocument>('o1', parkingLotId('o1')))?.document;
}

describe('storing an order over parked items', () => {
  it('closes the arrival gate in the same batch, so later parkers find the order', async () => {
    const t = orderFlow();
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 });
    expect(await lotOf(t)).toMatchObject({ state: 'closed', ttl: 3600 });
  });

  it('applies 97 parked items in its own batch of 100 operations (the order, its outbox entry, the gate) and drains the rest after', async () => {
    const t = orderFlow();
    for (let version = 1; version <= 150; version += 1) await t.send(`s-${version}`, 'OrderStatusChanged', orderStatusChanged('o1', version));
    t.store.commitLog.length = 0;
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 150, rejectedParked: [] });
    expect(t.store.commitLog.map((c) => c.operations.length)).toEqual([3, 100, 54]);
    expect(t.parked('o1').filter((p) => p.state === 'parked')).toEqual([]);
  });

  it('reads the partition again while parkers keep joining, and hands the message back after the attempts allowed', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 3 });
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    t.store.beforeCommit(overParked, () => touchGate(t, 'o1'), 100);
    t.store.commitLog.length = 0;
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toEqual({
      kind: 'retry',
      reason: "order o1's parked items changed under 3 attempts in a row",
    });
    expect(orderBatches(t)).toBe(4);
    expect(await t.order('o1')).toBeUndefined();
  });

  it('a twin copy that stores the order while this one reads the gate makes this one a duplicate, without a second batch', async () => {
    const t = orderFlow();
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    t.store.beforeRead(
      (_pk, id) => id === parkingLotId('o1'),
      async () => expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2)).outcome).toMatchObject({ kind: 'created' }),
    );
    t.store.commitLog.length = 0;
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toEqual({ kind: 'duplicate' });
    // This copy's first batch, then the twin's two: none more from this copy.
    expect(orderBatches(t)).toBe(3);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it("a twin copy that stores the order between this one's read and its batch makes this one a duplicate at once", async () => {
    const t = orderFlow();
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    t.store.beforeCommit(overParked, async () =>
      expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2)).outcome).toMatchObject({ kind: 'created' }),
    );
    t.store.commitLog.length = 0;
    const lotReads = t.store.reads;
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toEqual({ kind: 'duplicate' });
    expect(orderBatches(t)).toBe(4);
    // Its own read of the gate, the twin's read of the order (a redelivery reads first) and of the gate,
    // and the read of the order that tells the duplicate: no second round.
    expect(t.store.reads - lotReads).toBe(4);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('an item parked while the order reads its gate is applied with the order, never stranded behind the closed gate', async () => {
    // The order's reads of the gate and of the parked items are apart in time: p-2 parks (moving the
    // gate's etag) after the items were listed and before the gate is read. Reading the gate first
    // makes the batch fail on the etag and read again; reading it last stranded p-2.
    const t = orderFlow();
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    let firstGateRead = true;
    t.store.beforeRead(
      (_pk, id) => id === parkingLotId('o1') && firstGateRead && !(firstGateRead = false),
      async () => expect((await t.send('pay-2', 'PaymentReceived', paymentReceived('o1', { amount: 7 }))).outcome).toMatchObject({ kind: 'parked' }),
    );
    const placed = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(placed.outcome).toMatchObject({ kind: 'created', appliedParked: 2 });
    expect(t.parked('o1').filter((p) => p.state === 'parked')).toEqual([]);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 12, paymentCount: 2 });
  });

  it('a gate gone after its 409 (deleted by hand) is taken as the order stored, and told apart by the order read', async () => {
    const t = orderFlow();
    await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }));
    const store = new AnsweringStore(t.store);
    store.emptyRead((_pk, id) => id === parkingLotId('o1'));
    const { createOrderOrDetectDuplicate } = await import('../../../src/orders/placeOrder.js');
    const { parseOrderMessage } = await import('../../../src/orders/index.js');
    const { envelopeFromTriggerMetadata } = await import('../../../src/servicebus/index.js');
    const message = parseOrderMessage(envelopeFromTriggerMetadata({ messageId: 'm-o1', subject: 'OrderPlaced', deliveryCount: 1 }), orderPlaced('o1'), {
      maxMessageBytes: 262_144,
    });
    const outcome = await createOrderOrDetectDuplicate(message as Parameters<typeof createOrderOrDetectDuplicate>[0], { ...t.ctx, store });
    expect(outcome).toEqual({ kind: 'retry', reason: 'o1 was reported to exist but could not be read' });
  });
});
