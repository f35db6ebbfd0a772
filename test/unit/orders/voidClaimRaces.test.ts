import { describe, expect, it } from 'vitest';
import { replace } from '../../../src/idempotency/index.js';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { maxExactAmount } from '../../../src/orders/money.js';
import { parseOrderMessage, sweepParkedItems } from '../../../src/orders/index.js';
import { claimPayment } from '../../../src/orders/paymentClaims.js';
import type { PaymentMessage } from '../../../src/orders/paymentClaims.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// A void claim (its message rejected, holding no effect) may be taken over by another payment under
// the same paymentId. Each schedule below makes a claim look void while its message can still apply
// it, and puts the takeover exactly in the claimer's gap between its claim and its effect.
type Flow = ReturnType<typeof orderFlow>;
const payment = (orderId: string, overrides: Record<string, unknown> = {}) => paymentReceived(orderId, { paymentId: 'P-1', amount: 5, ...overrides });
const writes = (id: string) => (_pk: string, operations: readonly WriteOperation[]) => operations.some((op) => op.document.id === id);
const sweepOptions = { horizonSeconds: 3600, minAgeSeconds: 60, maxItemsPerRun: 100 };

async function placed(t: Flow, orderId: string): Promise<void> {
  expect((await t.send(`m-${orderId}`, 'OrderPlaced', orderPlaced(orderId))).outcome.kind).toBe('created');
}

/** How often P-1 is counted across these orders. */
async function timesCounted(t: Flow, ...orderIds: string[]): Promise<number> {
  let count = 0;
  for (const orderId of orderIds) count += (await t.order(orderId))?.paymentCount ?? 0;
  return count;
}

describe('a claim that looks void while its message can still apply it', () => {
  it('parked, rejected OrderNeverArrived, a late copy re-parks it while another payment under the paymentId takes the claim over: counted once', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    await placed(t, 'o2');
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    t.advance(3600 + 61);
    expect((await sweepParkedItems(t.ctx, sweepOptions)).rejected).toEqual([expect.objectContaining({ reason: 'OrderNeverArrived' })]);
    // A late copy of pay-1 passes the claim (the same payment) and goes to re-park the rejected item;
    // just before it writes, a payment naming another order under P-1 finds the claim's item rejected.
    let other: string | undefined;
    t.store.beforeCommit(writes('parked|payment|pay-1'), async () => {
      other = (await t.send('pay-2', 'PaymentReceived', payment('o2'))).outcome.kind;
    });
    expect((await t.send('pay-1-copy', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    await placed(t, 'o1');
    expect(await timesCounted(t, 'o1', 'o2')).toBe(1);
    expect(other).toBe('conflict');
  });

  it('the claimer reuses the MessageId of a message rejected before: another payment under the paymentId racing its effect does not take the claim over', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    // Rejected before any claim (the order is stored in EUR), recorded under MessageId pay-1.
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { currency: 'USD' }))).outcome.kind).toBe('invalid');
    // The sender corrects it and sends it again under the same MessageId: it claims P-1; just before
    // its effect, another payment under P-1 (another amount) meets the claim.
    let other: string | undefined;
    t.store.beforeCommit(writes('inbox|pay-1'), async () => {
      other = (await t.send('pay-2', 'PaymentReceived', payment('o1', { amount: 6 }))).outcome.kind;
    });
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(other).toBe('conflict');
  });
});

describe('a claim void because its order refuses the payment for good', () => {
  /** The order's amountPaid set by hand, this far below the exact-sum bound. */
  async function paidUpTo(t: Flow, orderId: string, roomLeft: number): Promise<void> {
    const stored = await t.memory.read<OrderDocument>(orderId, orderId);
    await t.memory.commit(orderId, [replace({ ...stored!.document, amountPaid: maxExactAmount - roomLeft } as OrderDocument, stored!.etag)]);
  }

  it('claimed, then refused as AmountOutOfRange: the payment under the paymentId with an amount that fits takes it over, once', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    await paidUpTo(t, 'o1', 10);
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { amount: 11 }))).outcome.kind).toBe('invalid');
    expect((await t.send('pay-2', 'PaymentReceived', payment('o1', { amount: 7 }))).outcome.kind).toBe('created');
    // Its redelivery now meets pay-2's claim, with another amount: a conflict, counted nowhere.
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { amount: 11 }), 2)).outcome.kind).toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount - 3, paymentCount: 1 });
  });

  it('applied, and its order filled up since: not void while its marker is there (another amount is a conflict)', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { amount: 5 }))).outcome.kind).toBe('created');
    await paidUpTo(t, 'o1', 1);
    expect((await t.send('pay-2', 'PaymentReceived', payment('o1', { amount: 1 }))).outcome.kind).toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount - 1, paymentCount: 1 });
  });

  it('parked and rejected OrderNeverArrived, its order since stored in its currency: not void (another payment under the paymentId is a conflict)', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    t.advance(3600 + 61);
    await sweepParkedItems(t.ctx, sweepOptions);
    await placed(t, 'o1');
    expect((await t.send('pay-2', 'PaymentReceived', payment('o1', { amount: 6 }))).outcome.kind).toBe('conflict');
    // The item comes back (a resubmit under its key) and is applied: the claim held for it.
    expect((await t.send('pay-1~resubmit-1', 'PaymentReceived', payment('o1'), 1, { 'idempotency-key': 'pay-1' })).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});

describe('a claim whose item was handed back to its order (a late copy met the order while it re-parked)', () => {
  it('parked in another currency, its late copy re-parks as the order comes and is refused: the payment in the order currency is applied, once', async () => {
    const t = orderFlow();
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { currency: 'USD' }))).outcome.kind).toBe('parked');
    // A late copy read the order as missing; just before it parks, the order comes (in EUR) and
    // rejects the item; the copy finds the gate closed, hands the item back and is refused itself.
    t.store.beforeCommit(writes('parked|payment|pay-1'), async () => placed(t, 'o1'));
    expect((await t.send('pay-1-copy', 'PaymentReceived', payment('o1', { currency: 'USD' }))).outcome.kind).toBe('invalid');
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'resubmitted', rejection: expect.objectContaining({ reason: 'CurrencyMismatch' }) })]);
    expect((await t.send('pay-2', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});

describe('a takeover reading the order after the claimer applied its payment', () => {
  it("the claimer commits between the takeover's reads of its marker and of its order (now too full for a second copy): not void, counted once", async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    const stored = await t.memory.read<OrderDocument>('o1', 'o1');
    await t.memory.commit('o1', [replace({ ...stored!.document, amountPaid: maxExactAmount - 10 } as OrderDocument, stored!.etag)]);
    // pay-1 (6) claims P-1 and its process dies before the effect.
    const claimer = parseOrderMessage(envelopeFromTriggerMetadata({ messageId: 'pay-1', subject: 'PaymentReceived' }), payment('o1', { amount: 6 }), {
      maxMessageBytes: 262_144,
    }) as PaymentMessage;
    expect((await claimPayment(claimer, t.ctx)).kind).toBe('apply');
    // pay-2 (3, another amount under P-1) meets the claim and asks whether it is void: its third read
    // in the order's partition (after the order at its start) is the second of the marker and the
    // order; just before it, the redelivery of pay-1 applies its payment (the order has room for 6 once, not twice).
    let reads = 0;
    let armed = true;
    t.store.beforeRead(
      (pk, id) => armed && pk === 'o1' && (id === 'o1' || id === 'inbox|pay-1') && (reads += 1) === 3,
      async () => expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { amount: 6 }), 2)).outcome.kind).toBe('created'),
    );
    const other = (await t.send('pay-2', 'PaymentReceived', payment('o1', { amount: 3 }))).outcome.kind;
    armed = false;
    // Read the right way round, the order still had room for pay-1 and nothing came between: pay-1 applies now.
    if (reads < 3) expect((await t.send('pay-1', 'PaymentReceived', payment('o1', { amount: 6 }), 2)).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: maxExactAmount - 4, paymentCount: 1 });
    expect(other).toBe('conflict');
  });
});
