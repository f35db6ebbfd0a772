import { rejectedMessagesPartition } from '../../../src/orders/index.js';
import { describe, expect, it } from 'vitest';
import { replace } from '../../../src/idempotency/index.js';
import { readOrderRequest } from '../../../src/intake/index.js';
import type { OrderDocument, OrderPlaced } from '../../../src/orders/index.js';
import { planParkedApplication } from '../../../src/orders/applyParkedItems.js';
import { newOrderDocument } from '../../../src/orders/documents.js';
import { orderRequest } from '../../support/intakeHarness.js';
import { flowStartMs, leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

const lines = (quantity: number, unitPrice: number) => [{ sku: 'SKU-1', quantity, unitPrice }];
const rejectionReason = (result: Awaited<ReturnType<ReturnType<typeof orderFlow>['send']>>) =>
  result.outcome.kind === 'invalid' ? result.outcome.error.code : result.outcome.kind;

describe('bounds on every number: the attacks a sender with Send rights tried', () => {
  it('refuses an OrderPlaced with unitPrice 1e300, stores nothing and publishes no OrderAccepted', async () => {
    const t = orderFlow();
    const result = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1', { lines: lines(2, 1e300) }));
    expect(rejectionReason(result)).toBe('SchemaViolation');
    expect(result.outcome.kind === 'invalid' && result.outcome.error.description).toContain('lines[0].unitPrice: must be at most 100000');
    expect(await t.order('o1')).toBeUndefined();
    expect(t.memory.list('o1').filter((d) => (d as { docType?: string }).docType === 'outbox')).toEqual([]);
  });

  it('refuses a quantity above 10,000, which with a large price made the total overflow to Infinity (stored as null)', async () => {
    const t = orderFlow();
    const result = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1', { lines: lines(20_000, 1e304) }));
    expect(rejectionReason(result)).toBe('SchemaViolation');
    expect(result.outcome.kind === 'invalid' && result.outcome.error.description).toContain('lines[0].quantity: must be at most 10000');
    expect(await t.order('o1')).toBeUndefined();
  });

  it('keeps the largest order it accepts exact: 100 lines of 10,000 at 99,999.9999 is a safe integer of ten-thousandths', async () => {
    const t = orderFlow();
    const biggest = Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i}`, quantity: 10_000, unitPrice: 99_999.9999 }));
    const result = await t.send('m-o1', 'OrderPlaced', orderPlaced('o1', { lines: biggest }));
    expect(result.outcome.kind).toBe('created');
    // 100 x 10,000 x 999,999,999 ten-thousandths = 999,999,999,000,000 (< 2^53): exact, nothing rounded away.
    expect((await t.order('o1'))?.total).toBe(99_999_999_900);
    expect(Number.isSafeInteger(((await t.order('o1'))?.total ?? 0) * 10_000)).toBe(true);
  });

  it('refuses a PaymentReceived with amount 1e300 and counts nothing', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const result = await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 1e300 }));
    expect(rejectionReason(result)).toBe('SchemaViolation');
    expect(result.outcome.kind === 'invalid' && result.outcome.error.description).toContain('amount: must be at most 10000000');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
  });

  it('takes a payment of exactly 10,000,000 and refuses one a ten-thousandth above', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect((await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 10_000_000 }))).outcome.kind).toBe('created');
    expect(rejectionReason(await t.send('pay-2', 'PaymentReceived', paymentReceived('o1', { amount: 10_000_000.0001 })))).toBe('SchemaViolation');
  });

  it('refuses a status version of 2^53-1, which froze the order status for good, and still applies version 2', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const frozen = await t.send('st-max', 'OrderStatusChanged', orderStatusChanged('o1', Number.MAX_SAFE_INTEGER, 'Cancelled'));
    expect(rejectionReason(frozen)).toBe('SchemaViolation');
    expect((await t.send('st-2', 'OrderStatusChanged', orderStatusChanged('o1', 2, 'Paid'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ status: 'Paid', statusVersion: 2 });
  });

  it('rejects a status version more than STATUS_VERSION_MAX_STEP above the stored one as VersionJump, recorded, order unchanged', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect((await t.send('st-5', 'OrderStatusChanged', orderStatusChanged('o1', 5, 'Paid'))).outcome.kind).toBe('created');
    const jump = await t.send('st-1006', 'OrderStatusChanged', orderStatusChanged('o1', 1006, 'Cancelled'));
    expect(rejectionReason(jump)).toBe('VersionJump');
    expect(jump.outcome.kind === 'invalid' && jump.outcome.error.description).toBe(
      'OrderStatusChanged version 1006 for order o1 is more than 1000 above the stored version 5 (STATUS_VERSION_MAX_STEP)',
    );
    expect(
      t.memory
        .list(rejectedMessagesPartition('st-1006'))
        .concat(t.memory.list('o1'))
        .filter((d) => (d as { reason?: string }).reason === 'VersionJump'),
    ).toHaveLength(1);
    expect((await t.send('st-1005', 'OrderStatusChanged', orderStatusChanged('o1', 1005, 'Shipped'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ status: 'Shipped', statusVersion: 1005 });
  });

  it('judges a status change for an order not stored yet against version 0, and parks a small one', async () => {
    const t = orderFlow();
    expect(rejectionReason(await t.send('st-1001', 'OrderStatusChanged', orderStatusChanged('o1', 1001, 'Cancelled')))).toBe('VersionJump');
    expect((await t.send('st-1000', 'OrderStatusChanged', orderStatusChanged('o1', 1000, 'Paid'))).outcome.kind).toBe('parked');
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(await t.order('o1')).toMatchObject({ status: 'Paid', statusVersion: 1000 });
  });
});

describe('the intake takes its bounds from the same schema', () => {
  it('refuses an order with unitPrice 1e300 or quantity 20,000 with a 400 naming the field', async () => {
    for (const [order, field] of [
      [orderPlaced('o-1', { lines: lines(2, 1e300) }), 'lines[0].unitPrice'],
      [orderPlaced('o-1', { lines: lines(20_000, 1) }), 'lines[0].quantity'],
    ] as const) {
      const response = await readOrderRequest(orderRequest('k', order), 64 * 1024);
      expect('status' in response && response.status).toBe(400);
      expect('status' in response && (response.body as { detail: string }).detail).toContain(field);
    }
  });
});

describe('amountPaid stays exact', () => {
  async function nearlyFullyPaid(t: ReturnType<typeof orderFlow>): Promise<void> {
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const stored = await t.memory.read<OrderDocument>('o1', 'o1');
    await t.memory.commit('o1', [replace({ ...stored!.document, amountPaid: 900_715_000_000, paymentCount: 90_000 } as OrderDocument, stored!.etag)]);
  }

  it('refuses a payment that would take amountPaid past 2^53 ten-thousandths as AmountOutOfRange, counting nothing', async () => {
    const t = orderFlow();
    await nearlyFullyPaid(t);
    const result = await t.send('pay-x', 'PaymentReceived', paymentReceived('o1', { amount: 10_000_000 }));
    expect(rejectionReason(result)).toBe('AmountOutOfRange');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 900_715_000_000, paymentCount: 90_000 });
    expect((await t.send('pay-y', 'PaymentReceived', paymentReceived('o1', { amount: 500_000 }))).outcome.kind).toBe('created');
  });

  it('rejects such a parked payment when its order comes, and applies the rest', async () => {
    const t = orderFlow();
    await t.send('pay-x', 'PaymentReceived', paymentReceived('o1', { amount: 10_000_000 }));
    await leftParked(t, 'o1', 'pay-y', 'PaymentReceived', paymentReceived('o1', { amount: 1, paymentId: 'P-y' }), flowStartMs + 1000);
    const plan = planParkedApplication(
      { ...newOrderFor('o1'), amountPaid: 900_715_000_000 },
      t.parked('o1').map((document) => ({ document, etag: 'e' })),
      99,
      t.ctx,
    );
    expect(plan.rejected.map((r) => [r.item.id, r.reason])).toEqual([['parked|payment|pay-x', 'AmountOutOfRange']]);
    expect(plan.order).toMatchObject({ amountPaid: 900_715_000_001, paymentCount: 1 });
  });
});

function newOrderFor(orderId: string): OrderDocument {
  return newOrderDocument(orderPlaced(orderId) as OrderPlaced, { dedupKey: `m-${orderId}`, fingerprint: 'f', processedAt: '2026-11-30T12:00:00Z' });
}
