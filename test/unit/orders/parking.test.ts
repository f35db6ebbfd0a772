import { describe, expect, it } from 'vitest';
import { inboxMarkerId, parkingLotId, rejectionDocumentId, sweepParkedItems, throwUnlessCompletable } from '../../../src/orders/index.js';
import type { ParkedItemDocument, ParkingLotDocument } from '../../../src/orders/index.js';
import { flowStartMs, orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

const sweepOptions = { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 100 };

describe('early arrivals are parked, not retried', () => {
  it('parks a payment that comes before its order, completes it, and applies it exactly once with the order', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o1', { amount: 5 });
    const first = await t.send('pay-1', 'PaymentReceived', pay);
    expect(first.outcome).toEqual({ kind: 'parked', itemId: expect.stringMatching(/^parked\|payment\|/) });
    expect(() => throwUnlessCompletable(first.outcome)).not.toThrow();
    expect(await t.order('o1')).toBeUndefined();

    const placed = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(placed.outcome).toEqual({ kind: 'created', appliedParked: 1, rejectedParked: [] });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'applied', appliedAs: 'payment', ttl: parkedItemTtlSeconds })]);
    // The inbox marker is written with it: a copy that comes after the order is a duplicate there.
    expect((await t.memory.read('o1', inboxMarkerId('pay-1')))?.document).toMatchObject({ fingerprint: expect.any(String) });
    expect((await t.send('pay-1', 'PaymentReceived', pay, 2)).outcome.kind).toBe('duplicate');
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2)).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('parks in four round trips and stores a new order in one when nothing is parked', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    t.store.commits = 0;
    await t.send('pay-rt', 'PaymentReceived', paymentReceived('o-rt'));
    // Read the order; read its arrival gate (none: nothing parked by a release before claims); create the claim; park.
    expect(t.store.trips).toBe(4);
    expect(t.store.queries).toBe(0);
    t.store.commits = t.store.reads = t.store.queries = 0;
    await t.send('m-o-new', 'OrderPlaced', orderPlaced('o-new'));
    expect(t.store.trips).toBe(1);
  });

  it('tells a redelivered parked payment (duplicate) from another payload under its key (conflict, recorded with its reason)', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('o2', { amount: 5 });
    await t.send('pay-2', 'PaymentReceived', pay);
    expect((await t.send('pay-2', 'PaymentReceived', pay, 2)).outcome.kind).toBe('duplicate');
    const other = await t.send('pay-2', 'PaymentReceived', { ...pay, amount: 7 });
    expect(other.outcome.kind).toBe('conflict');
    expect(() => throwUnlessCompletable(other.outcome)).toThrow(/differs from what is stored/);
    expect((await t.memory.read('o2', rejectionDocumentId('pay-2')))?.document).toMatchObject({ reason: 'PayloadConflict' });
    await t.send('m-o2', 'OrderPlaced', orderPlaced('o2'));
    expect(await t.order('o2')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('applies every parked payment and ends parked status changes at the highest version', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('s-3', 'OrderStatusChanged', orderStatusChanged('o3', 3, 'Delivered'));
    await t.send('s-1', 'OrderStatusChanged', orderStatusChanged('o3', 1, 'Paid'));
    await t.send('p-a', 'PaymentReceived', paymentReceived('o3', { amount: 1.1 }));
    await t.send('s-2', 'OrderStatusChanged', orderStatusChanged('o3', 2, 'Shipped'));
    await t.send('p-b', 'PaymentReceived', paymentReceived('o3', { amount: 2.2 }));
    const placed = await t.send('m-o3', 'OrderPlaced', orderPlaced('o3'));
    expect(placed.outcome).toMatchObject({ kind: 'created', appliedParked: 5 });
    expect(await t.order('o3')).toMatchObject({ status: 'Delivered', statusVersion: 3, statusMessageId: 's-3', amountPaid: 3.3, paymentCount: 2 });
    expect(
      t
        .parked('o3')
        .map((i) => i.appliedAs)
        .sort(),
    ).toEqual(['payment', 'payment', 'stale', 'stale', 'status']);
    // Later copies decide against the stored order as they always have.
    expect((await t.send('s-2', 'OrderStatusChanged', orderStatusChanged('o3', 2, 'Shipped'), 2)).outcome.kind).toBe('stale');
    expect((await t.send('s-3', 'OrderStatusChanged', orderStatusChanged('o3', 3, 'Delivered'), 2)).outcome.kind).toBe('duplicate');
  });

  it('treats another status at a parked version as a conflict, as on a stored order', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('s-a', 'OrderStatusChanged', orderStatusChanged('o4', 2, 'Shipped'));
    const other = await t.send('s-b', 'OrderStatusChanged', orderStatusChanged('o4', 2, 'Cancelled'));
    expect(other.outcome.kind).toBe('conflict');
    expect((await t.send('s-c', 'OrderStatusChanged', orderStatusChanged('o4', 2, 'Shipped'))).outcome.kind).toBe('duplicate');
  });

  it('rejects a parked payment in another currency when its order comes, logs it at error and never counts it', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-usd', 'PaymentReceived', paymentReceived('o5', { currency: 'USD' }));
    const placed = await t.send('m-o5', 'OrderPlaced', orderPlaced('o5'));
    expect(placed.outcome).toMatchObject({
      kind: 'created',
      appliedParked: 0,
      rejectedParked: [expect.objectContaining({ reason: 'CurrencyMismatch', orderId: 'o5', messageId: 'pay-usd' })],
    });
    expect(await t.order('o5')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
    expect(t.parked('o5')).toEqual([expect.objectContaining({ state: 'rejected', rejection: expect.objectContaining({ reason: 'CurrencyMismatch' }) })]);
    expect(t.log.lines.filter((l) => l.level === 'error').map((l) => [l.record.event, l.record.reason])).toEqual([['parked-item', 'CurrencyMismatch']]);
  });

  it('applies more parked items than one batch holds: the rest right after, each exactly once', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    for (let i = 0; i < 70; i += 1) await t.send(`pay-many-${i}`, 'PaymentReceived', paymentReceived('o6', { amount: 1 }));
    const placed = await t.send('m-o6', 'OrderPlaced', orderPlaced('o6'));
    expect(placed.outcome).toMatchObject({ kind: 'created', appliedParked: 70 });
    expect(await t.order('o6')).toMatchObject({ amountPaid: 70, paymentCount: 70 });
    expect(t.parked('o6').every((i) => i.state === 'applied')).toBe(true);
  });
});

describe('the race window between a parker and its order, provoked deterministically', () => {
  it('a parker that read "no order" just before the order landed finds the gate closed and applies on the normal path', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('r1', { amount: 4 });
    // The payment's parking batch waits until the order's whole batch has committed.
    t.store.beforeCommit(
      (_pk, ops) => ops.some((op) => (op.document as { docType?: string }).docType === 'parked'),
      () => t.send('m-r1', 'OrderPlaced', orderPlaced('r1')),
    );
    const result = await t.send('pay-r1', 'PaymentReceived', pay);
    expect(result.outcome.kind).toBe('created');
    expect(await t.order('r1')).toMatchObject({ amountPaid: 4, paymentCount: 1 });
    expect(t.parked('r1')).toEqual([]);
    expect((await t.memory.read<ParkingLotDocument>('r1', parkingLotId('r1')))?.document.state).toBe('closed');
  });

  it('a parker that joins after the order read the partition makes the order batch fail on the gate, and the order reads again', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-j1', 'PaymentReceived', paymentReceived('r2', { amount: 1 }));
    // The order's second batch (with the parked items it read) waits while another payment parks.
    t.store.beforeCommit(
      (_pk, ops) => ops.length > 3 && (ops[0]?.document as { docType?: string }).docType === 'order',
      () => t.send('pay-j2', 'PaymentReceived', paymentReceived('r2', { amount: 2 })),
    );
    const placed = await t.send('m-r2', 'OrderPlaced', orderPlaced('r2'));
    expect(placed.outcome).toMatchObject({ kind: 'created', appliedParked: 2 });
    expect(await t.order('r2')).toMatchObject({ amountPaid: 3, paymentCount: 2 });
  });

  it('two copies of the OrderPlaced racing over parked items apply them once', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-c1', 'PaymentReceived', paymentReceived('r3', { amount: 6 }));
    t.store.beforeCommit(
      (_pk, ops) => ops.length > 3 && (ops[0]?.document as { docType?: string }).docType === 'order',
      () => t.send('m-r3', 'OrderPlaced', orderPlaced('r3'), 2),
    );
    const first = await t.send('m-r3', 'OrderPlaced', orderPlaced('r3'));
    expect(first.outcome.kind).toBe('duplicate');
    expect(await t.order('r3')).toMatchObject({ amountPaid: 6, paymentCount: 1 });
  });

  it('a sweep racing the order batch changes each item once: applied or rejected, never both', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-s1', 'PaymentReceived', paymentReceived('r4', { amount: 8 }));
    t.advance(7200);
    t.store.beforeCommit(
      (_pk, ops) => ops.length > 3 && (ops[0]?.document as { docType?: string }).docType === 'order',
      () => sweepParkedItems(t.ctx, sweepOptions),
    );
    const placed = await t.send('m-r4', 'OrderPlaced', orderPlaced('r4'));
    expect(placed.outcome).toMatchObject({ kind: 'created', appliedParked: 0 });
    expect(await t.order('r4')).toMatchObject({ amountPaid: 0 });
    expect(t.parked('r4')).toEqual([expect.objectContaining({ state: 'rejected', rejection: expect.objectContaining({ reason: 'OrderNeverArrived' }) })]);
  });
});

describe('the parked-item sweeper', () => {
  it('rejects as OrderNeverArrived only what waited past the horizon for an order that is still missing', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('pay-old', 'PaymentReceived', paymentReceived('w1'));
    t.advance(3000);
    await t.send('pay-young', 'PaymentReceived', paymentReceived('w2'));
    t.advance(700);
    const result = await sweepParkedItems(t.ctx, sweepOptions);
    expect(result).toMatchObject({
      examined: 2,
      applied: 0,
      rejected: [expect.objectContaining({ reason: 'OrderNeverArrived', orderId: 'w1', messageId: 'pay-old' })],
    });
    // The one left waiting, for the age alert: parked 700 s ago (the rejected one no longer counts).
    expect(result.oldestParkedAgeSeconds).toBe(700);
    expect(t.parked('w1')[0]).toMatchObject({ state: 'rejected', rejection: { reason: 'OrderNeverArrived', description: expect.stringContaining('3600 s') } });
    expect(t.parked('w2')[0]?.state).toBe('parked');
    // A second sweep finds nothing more to reject.
    expect((await sweepParkedItems(t.ctx, sweepOptions)).rejected).toEqual([]);
  });

  it('applies what is still parked for a stored order (left by a crash between batches)', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await t.send('m-w3', 'OrderPlaced', orderPlaced('w3'));
    // As a crash after the order's first batch would leave it: parked, with the order stored.
    const item: ParkedItemDocument = {
      id: 'parked|payment|left-over',
      orderId: 'w3',
      docType: 'parked',
      state: 'parked',
      messageType: 'PaymentReceived',
      messageId: 'left-over',
      dedupKey: 'left-over',
      fingerprint: 'f',
      payload: paymentReceived('w3', { amount: 3 }),
      parkedAt: new Date(flowStartMs).toISOString(),
    };
    await t.memory.commit('w3', [{ kind: 'create', document: item }]);
    t.advance(120);
    expect(await sweepParkedItems(t.ctx, sweepOptions)).toMatchObject({ applied: 1, rejected: [], oldestParkedAgeSeconds: 0 });
    expect(await t.order('w3')).toMatchObject({ amountPaid: 3, paymentCount: 1 });
    expect((await sweepParkedItems(t.ctx, sweepOptions)).applied).toBe(0);
  });

  it('parks a rejected item afresh when it comes again (a resubmit), and the order then applies it', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const pay = paymentReceived('w4', { amount: 9 });
    await t.send('pay-w4', 'PaymentReceived', pay);
    t.advance(7200);
    await sweepParkedItems(t.ctx, sweepOptions);
    expect(t.parked('w4')[0]?.state).toBe('rejected');
    expect((await t.send('pay-w4~resubmit-1', 'PaymentReceived', pay, 1, { 'idempotency-key': 'pay-w4' })).outcome.kind).toBe('parked');
    expect(t.parked('w4')[0]).toMatchObject({ state: 'parked', parkedAt: new Date(flowStartMs + 7_200_000).toISOString() });
    await t.send('m-w4', 'OrderPlaced', orderPlaced('w4'));
    expect(await t.order('w4')).toMatchObject({ amountPaid: 9, paymentCount: 1 });
  });
});
