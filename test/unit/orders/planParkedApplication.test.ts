import { describe, expect, it } from 'vitest';
import type { VersionedDocument, WriteOperation } from '../../../src/idempotency/index.js';
import { planParkedApplication } from '../../../src/orders/applyParkedItems.js';
import { newOrderDocument } from '../../../src/orders/documents.js';
import type { OrderDocument } from '../../../src/orders/documents.js';
import type { OrderPlaced, OrderStatusChanged, ParkedItemDocument, PaymentReceived } from '../../../src/orders/index.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

// The plan a batch applies: pure, so the order of application, the room it takes and every
// operation it adds are pinned here, item by item.
const at = '2026-11-30T12:00:00.000Z';
const ctx = { now: () => new Date(at), markerTtlSeconds: 3600 };

function storedOrder(extra: Partial<OrderDocument> = {}): OrderDocument {
  return { ...newOrderDocument(orderPlaced('o1') as OrderPlaced, { messageId: 'm-o1', dedupKey: 'm-o1', fingerprint: 'fp-order', processedAt: at }), ...extra };
}

let etags = 0;
function parked(
  messageType: ParkedItemDocument['messageType'],
  messageId: string,
  payload: PaymentReceived | OrderStatusChanged,
  parkedAt = '2026-11-30T11:00:00.000Z',
): VersionedDocument<ParkedItemDocument> {
  const kind = messageType === 'PaymentReceived' ? 'payment' : 'status';
  const document: ParkedItemDocument = {
    id: `parked|${kind}|${messageId}`,
    orderId: 'o1',
    docType: 'parked',
    state: 'parked',
    messageType,
    messageId,
    dedupKey: messageId,
    fingerprint: `fp-${messageId}`,
    payload,
    parkedAt,
  };
  return { document, etag: `"e${(etags += 1)}"` };
}

const payment = (messageId: string, amount: number, parkedAt?: string, currency = 'EUR') =>
  parked('PaymentReceived', messageId, paymentReceived('o1', { paymentId: messageId, amount, currency }) as PaymentReceived, parkedAt);
const status = (messageId: string, version: number, value = 'Shipped') =>
  parked('OrderStatusChanged', messageId, orderStatusChanged('o1', version, value) as OrderStatusChanged);

/** Each operation as [kind, id, what it marks the item as]. */
function shapeOf(operations: readonly WriteOperation[]): [string, string, string | undefined][] {
  return operations.map((op) => {
    const doc = op.document as Partial<ParkedItemDocument> & { id: string; docType?: string };
    return [op.kind, doc.id, doc.docType === 'parked' ? (doc.state === 'applied' ? doc.appliedAs : doc.state) : doc.docType];
  });
}

describe('planning the application of parked items', () => {
  it('applies status changes first, highest version first (the rest are stale), then payments in the order they were parked, ties by id', async () => {
    const items = [
      payment('p-late', 1, '2026-11-30T11:30:00.000Z'),
      status('s-2', 2),
      payment('p-b', 2, '2026-11-30T11:10:00.000Z'),
      status('s-3', 3, 'Delivered'),
      payment('p-a', 3, '2026-11-30T11:10:00.000Z'),
      status('s-1', 1),
      payment('p-early', 4, '2026-11-30T11:00:00.000Z'),
    ];
    const plan = planParkedApplication(storedOrder(), items, 99, ctx);
    expect(shapeOf(plan.operations)).toEqual([
      ['replace', 'parked|status|s-3', 'status'],
      ['replace', 'parked|status|s-2', 'stale'],
      ['replace', 'parked|status|s-1', 'stale'],
      ['create', 'inbox|p-early', 'inbox'],
      ['replace', 'parked|payment|p-early', 'payment'],
      ['create', 'inbox|p-a', 'inbox'],
      ['replace', 'parked|payment|p-a', 'payment'],
      ['create', 'inbox|p-b', 'inbox'],
      ['replace', 'parked|payment|p-b', 'payment'],
      ['create', 'inbox|p-late', 'inbox'],
      ['replace', 'parked|payment|p-late', 'payment'],
    ]);
    expect(plan.order).toMatchObject({
      status: 'Delivered',
      statusVersion: 3,
      statusMessageId: 's-3',
      statusFingerprint: 'fp-s-3',
      amountPaid: 10,
      paymentCount: 4,
    });
    expect([plan.applied, plan.rejected, plan.remaining]).toEqual([7, [], 0]);
    expect([...plan.markerItems]).toEqual([
      [3, 'parked|payment|p-early'],
      [5, 'parked|payment|p-a'],
      [7, 'parked|payment|p-b'],
      [9, 'parked|payment|p-late'],
    ]);
  });

  it('writes each inbox marker whole: the payment, its key, its fingerprint and the marker ttl', () => {
    const item = payment('p-1', 5);
    const plan = planParkedApplication(storedOrder(), [item], 99, ctx);
    expect(plan.operations[0]).toEqual({
      kind: 'create',
      document: {
        id: 'inbox|p-1',
        orderId: 'o1',
        docType: 'inbox',
        messageType: 'PaymentReceived',
        messageId: 'p-1',
        dedupKey: 'p-1',
        fingerprint: 'fp-p-1',
        processedAt: at,
        payload: item.document.payload,
        ttl: 3600,
      },
    });
    expect(plan.operations[1]).toEqual({
      kind: 'replace',
      ifMatch: item.etag,
      document: { ...item.document, state: 'applied', appliedAs: 'payment', appliedAt: at, ttl: 3600 },
    });
  });

  it('takes two operations per payment (its marker and its mark) and one per status change, and leaves what does not fit for the next batch', () => {
    const items = [payment('p-1', 1, '2026-11-30T11:00:00.000Z'), payment('p-2', 1, '2026-11-30T11:01:00.000Z')];
    expect(planParkedApplication(storedOrder(), items, 4, ctx)).toMatchObject({ applied: 2, remaining: 0 });
    const tight = planParkedApplication(storedOrder(), items, 3, ctx);
    expect([tight.operations.length, tight.applied, tight.remaining, tight.order.paymentCount]).toEqual([2, 1, 1, 1]);
    expect(planParkedApplication(storedOrder(), items, 1, ctx)).toMatchObject({ operations: [], applied: 0, remaining: 2 });
    expect(planParkedApplication(storedOrder(), [status('s-2', 2)], 1, ctx)).toMatchObject({ applied: 1, remaining: 0 });
  });

  it('a payment whose marker was found takes one operation: marked applied (the same payment) or rejected (another one), never counted again', () => {
    const same = payment('p-same', 5, '2026-11-30T11:00:00.000Z');
    const other = payment('p-other', 5, '2026-11-30T11:01:00.000Z');
    const found = new Map<string, 'same' | 'other'>([
      [same.document.id, 'same'],
      [other.document.id, 'other'],
    ]);
    const plan = planParkedApplication(storedOrder(), [same, other], 2, ctx, found);
    expect(shapeOf(plan.operations)).toEqual([
      ['replace', 'parked|payment|p-same', 'payment'],
      ['replace', 'parked|payment|p-other', 'rejected'],
    ]);
    expect([plan.applied, plan.order.paymentCount, plan.markerItems.size, plan.remaining]).toEqual([1, 0, 0, 0]);
    expect(plan.rejected.map((r) => [r.item.id, r.reason, r.description])).toEqual([
      ['parked|payment|p-other', 'PayloadConflict', 'PaymentReceived p-other for order o1 differs from the payment already applied under that key'],
    ]);
    expect(plan.operations[1]?.document).toMatchObject({
      rejection: {
        reason: 'PayloadConflict',
        description: 'PaymentReceived p-other for order o1 differs from the payment already applied under that key',
        rejectedAt: at,
      },
    });
  });

  it('rejects a payment in another currency as CurrencyMismatch, naming both currencies, and counts nothing', () => {
    const plan = planParkedApplication(storedOrder(), [payment('p-usd', 5, undefined, 'USD')], 99, ctx);
    const description = "PaymentReceived.currency USD differs from order o1's EUR";
    expect(plan.rejected.map((r) => [r.reason, r.description])).toEqual([['CurrencyMismatch', description]]);
    expect(plan.operations).toHaveLength(1);
    expect(plan.operations[0]?.document).toMatchObject({ state: 'rejected', rejection: { reason: 'CurrencyMismatch', description, rejectedAt: at } });
    expect([plan.applied, plan.order.paymentCount]).toEqual([0, 0]);
  });

  it("counts a parked payment that claimed its paymentId among the order's claimed payments, and one parked before claims not", () => {
    const claimed = payment('p-claimed', 1);
    const plan = planParkedApplication(
      storedOrder(),
      [{ ...claimed, document: { ...claimed.document, claimed: true } }, payment('p-old', 2, '2026-11-30T11:30:00.000Z')],
      99,
      ctx,
    );
    expect([plan.applied, plan.order.paymentCount, plan.order.claimedPaymentCount]).toEqual([2, 2, 1]);
  });

  describe('a status change at the stored version', () => {
    it('that contradicts the stored one is rejected, naming the stored message (or "unknown") and both fingerprints', () => {
      const stored = { statusVersion: 2, status: 'Paid', statusFingerprint: 'fp-stored' } as const;
      const named = planParkedApplication(storedOrder({ ...stored, statusMessageId: 'st-2a' }), [status('st-2b', 2, 'Cancelled')], 99, ctx);
      const description = 'OrderStatusChanged version 2 for order o1 differs from the stored one (message st-2a, fingerprint fp-stored; this one fp-st-2b)';
      expect(named.rejected.map((r) => [r.reason, r.description])).toEqual([['PayloadConflict', description]]);
      expect(named.operations[0]?.document).toMatchObject({ state: 'rejected', rejection: { reason: 'PayloadConflict', description, rejectedAt: at } });
      expect([named.applied, named.order.status]).toEqual([0, 'Paid']);
      const unnamed = planParkedApplication(storedOrder(stored), [status('st-2b', 2, 'Cancelled')], 99, ctx);
      expect(unnamed.rejected[0]?.description).toBe(
        'OrderStatusChanged version 2 for order o1 differs from the stored one (message unknown, fingerprint fp-stored; this one fp-st-2b)',
      );
    });

    it("below the stored one that contradicts the history is rejected, naming no message (the order keeps only the newest one's)", () => {
      const stored = { statusVersion: 3, status: 'Shipped', statusFingerprint: 'fp-st-3', statusMessageId: 'st-3', statusHistory: { '2': 'fp-old' } } as const;
      const plan = planParkedApplication(storedOrder(stored), [status('st-2b', 2, 'Cancelled')], 99, ctx);
      expect(plan.rejected.map((r) => [r.reason, r.description])).toEqual([
        ['PayloadConflict', 'OrderStatusChanged version 2 for order o1 differs from the stored one (message unknown, fingerprint fp-old; this one fp-st-2b)'],
      ]);
    });

    it('that is the stored one, or meets a stored status with no fingerprint, is applied as stale and changes nothing', () => {
      const same = planParkedApplication(
        storedOrder({ statusVersion: 2, status: 'Paid', statusFingerprint: 'fp-st-2' }),
        [status('st-2', 2, 'Cancelled')],
        99,
        ctx,
      );
      expect([shapeOf(same.operations), same.applied, same.rejected, same.order.status]).toEqual([[['replace', 'parked|status|st-2', 'stale']], 1, [], 'Paid']);
      const legacy = planParkedApplication(
        storedOrder({ statusVersion: 2, status: 'Paid', statusFingerprint: undefined }),
        [status('st-2', 2, 'Cancelled')],
        99,
        ctx,
      );
      expect([shapeOf(legacy.operations), legacy.applied, legacy.rejected, legacy.order.status]).toEqual([
        [['replace', 'parked|status|st-2', 'stale']],
        1,
        [],
        'Paid',
      ]);
    });
  });
});

describe('parked items and the arrival gate, as documents', () => {
  it('parks only payments and status changes: an OrderPlaced has no order to wait for', async () => {
    const { newParkedItem, isParkable } = await import('../../../src/orders/parkedItems.js');
    const placed = { type: 'OrderPlaced', payload: orderPlaced('o1'), key: { value: 'm-o1' } } as unknown as Parameters<typeof newParkedItem>[0];
    expect(isParkable(placed)).toBe(false);
    expect(() => newParkedItem(placed, at, 60)).toThrow(new TypeError('OrderPlaced is never parked: it has no order to wait for'));
  });

  it('writes a gate with a ttl only when given one (an open gate lives as long as its items wait)', async () => {
    const { parkingLot } = await import('../../../src/orders/parkedItems.js');
    expect(parkingLot('o1', 'open', at)).toStrictEqual({ id: 'parking-lot|o1', orderId: 'o1', docType: 'parking-lot', state: 'open', changedAt: at });
    expect(parkingLot('o1', 'closed', at, 3600)).toEqual({
      id: 'parking-lot|o1',
      orderId: 'o1',
      docType: 'parking-lot',
      state: 'closed',
      changedAt: at,
      ttl: 3600,
    });
  });

  it('rejects a parked status change too far above the stored version as VersionJump, saying by how much and which setting', () => {
    const plan = planParkedApplication(storedOrder(), [status('s-9', 9)], 10, { ...ctx, statusVersionMaxStep: 3 });
    expect(plan.rejected).toEqual([
      expect.objectContaining({
        reason: 'VersionJump',
        description: 'OrderStatusChanged version 9 for order o1 is more than 3 above the stored version 0 (STATUS_VERSION_MAX_STEP)',
      }),
    ]);
    expect(shapeOf(plan.operations)).toEqual([['replace', 'parked|status|s-9', 'rejected']]);
    expect(plan.order.statusVersion).toBe(0);
  });

  it('takes payments parked in the same instant by id, whatever order the query returned them in', () => {
    const sameInstant = '2026-11-30T11:10:00.000Z';
    for (const items of [
      [payment('p-c', 1, sameInstant), payment('p-b', 2, sameInstant), payment('p-a', 3, sameInstant)],
      [payment('p-b', 2, sameInstant), payment('p-c', 1, sameInstant), payment('p-a', 3, sameInstant)],
      [payment('p-a', 3, sameInstant), payment('p-c', 1, sameInstant), payment('p-b', 2, sameInstant)],
    ]) {
      // Room for one payment (its marker and its item): the first by id goes now, the rest in a later batch.
      expect(shapeOf(planParkedApplication(storedOrder(), items, 2, ctx).operations).map(([, id]) => id)).toEqual(['inbox|p-a', 'parked|payment|p-a']);
      expect(
        shapeOf(planParkedApplication(storedOrder(), items, 10, ctx).operations)
          .filter(([, , as]) => as === 'payment')
          .map(([, id]) => id),
      ).toEqual(['parked|payment|p-a', 'parked|payment|p-b', 'parked|payment|p-c']);
    }
  });
});
