import { describe, expect, it } from 'vitest';
import { create, fingerprintPayload } from '../../../src/idempotency/index.js';
import type { StoredDocument } from '../../../src/idempotency/index.js';
import type { OrderDocument, ParkedItemDocument } from '../../../src/orders/index.js';
import { parkingLot } from '../../../src/orders/parkedItems.js';
import { touches } from '../../support/interleavingStore.js';
import { leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

type Flow = ReturnType<typeof orderFlow>;
const docsOf = (t: Flow, partition: string, docType: string) => t.memory.list(partition).filter((d) => (d as { docType?: string }).docType === docType);
const claimOf = (t: Flow, paymentId: string) =>
  t.memory.list(`#payment|${paymentId}`).find((d) => d.id === `payment|${paymentId}`) as (StoredDocument & Record<string, unknown>) | undefined;
const payment = (orderId: string, overrides: Record<string, unknown> = {}) => paymentReceived(orderId, { paymentId: 'P-1', amount: 5, ...overrides });
const crash = () => Promise.reject(new Error('the process died here'));

async function placed(t: Flow, ...orderIds: string[]): Promise<void> {
  for (const orderId of orderIds) expect((await t.send(`m-${orderId}`, 'OrderPlaced', orderPlaced(orderId))).outcome.kind).toBe('created');
}

describe('a payment is applied once per paymentId, whatever its MessageId', () => {
  it('takes the same payment re-sent under a new MessageId (no idempotency-key) for a duplicate', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('created');
    expect((await t.send('msg-b', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    expect((await t.send('msg-c', 'PaymentReceived', payment('o1', { receivedAt: '2026-11-30T09:05:00Z' }))).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(claimOf(t, 'P-1')).toMatchObject({
      docType: 'payment-claim',
      paymentId: 'P-1',
      paymentOrderId: 'o1',
      amount: 5,
      currency: 'EUR',
      dedupKey: 'msg-a',
    });
  });

  it('sends the same paymentId with another amount or currency down the conflict path, counting nothing', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    await t.send('msg-a', 'PaymentReceived', payment('o1'));
    const other = await t.send('msg-b', 'PaymentReceived', payment('o1', { amount: 50 }));
    expect(other.outcome.kind).toBe('conflict');
    expect(other.outcome.kind === 'conflict' && other.outcome.error.description).toContain('payment P-1');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(docsOf(t, 'o1', 'conflict')).toHaveLength(1);
    expect(docsOf(t, 'o1', 'rejection')).toEqual([expect.objectContaining({ reason: 'PayloadConflict', messageId: 'msg-b' })]);
  });

  it('records a payment "corrected" to another order as a conflict there, and counts it on neither twice', async () => {
    const t = orderFlow();
    await placed(t, 'o1', 'o2');
    await t.send('msg-a', 'PaymentReceived', payment('o1'));
    for (const messageId of ['msg-a', 'msg-b']) {
      const moved = await t.send(messageId, 'PaymentReceived', payment('o2'));
      expect(moved.outcome.kind, messageId).toBe('conflict');
    }
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(await t.order('o2')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
    expect(docsOf(t, 'o2', 'conflict').length).toBeGreaterThanOrEqual(1);
    expect(docsOf(t, 'o2', 'conflict')[0]).toMatchObject({ messageType: 'PaymentReceived', existing: { documentId: 'payment|P-1' } });
  });

  it('keeps a reused idempotency-key with another payment a conflict', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    await t.send('msg-a', 'PaymentReceived', payment('o1'), 1, { 'idempotency-key': 'K' });
    const reused = await t.send('msg-b', 'PaymentReceived', payment('o1', { paymentId: 'P-2' }), 1, { 'idempotency-key': 'K' });
    expect(reused.outcome.kind).toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('parks no second item for a copy under a new MessageId that arrives before its order', async () => {
    const t = orderFlow();
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    expect((await t.send('msg-b', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    expect(t.parked('o1')).toHaveLength(1);
    await placed(t, 'o1');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect((await t.send('msg-c', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('costs one more round trip, the claim, for a new payment on a stored order', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    const before = { trips: t.store.trips, commits: t.store.commits };
    await t.send('msg-a', 'PaymentReceived', payment('o1'));
    // read the order, create the claim, commit marker + order: 3 (the release before: 2).
    expect(t.store.trips - before.trips).toBe(3);
    expect(t.store.commits - before.commits).toBe(2);
  });
});

describe('the claim and the effect are in different partitions: the schedules between them', () => {
  it('the process dies after the claim, before the effect: the redelivery finds its own claim and applies the payment', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    t.store.beforeCommit(touches('inbox'), crash);
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('retry');
    expect(claimOf(t, 'P-1')).toBeDefined();
    expect(await t.order('o1')).toMatchObject({ paymentCount: 0 });
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it("the claimer dies before its effect and a copy under another MessageId comes: the copy applies it, the claimer's redelivery is a duplicate", async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    t.store.beforeCommit(touches('inbox'), crash);
    await t.send('msg-a', 'PaymentReceived', payment('o1'));
    expect((await t.send('msg-b', 'PaymentReceived', payment('o1', { receivedAt: '2026-11-30T09:05:00Z' }))).outcome.kind).toBe('created');
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(docsOf(t, 'o1', 'inbox').map((d) => d.id)).toEqual(['inbox|msg-a']);
  });

  it("two copies under different MessageIds race, the second between the first's claim and its effect: applied once, both complete", async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    let second: Awaited<ReturnType<Flow['send']>> | undefined;
    t.store.beforeCommit(touches('inbox'), async () => (second = await t.send('msg-b', 'PaymentReceived', payment('o1'))));
    const first = await t.send('msg-a', 'PaymentReceived', payment('o1'));
    expect([first.outcome.kind, second?.outcome.kind].sort()).toEqual(['created', 'duplicate']);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it("a copy parked under the claimer's key while the claimer died before parking is the one parked item", async () => {
    const t = orderFlow();
    t.store.beforeCommit(touches('parked'), crash);
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('retry');
    expect((await t.send('msg-b', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('duplicate');
    expect(t.parked('o1').map((p) => p.id)).toEqual(['parked|payment|msg-a']);
    await placed(t, 'o1');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});

describe('payments the release before stored (inbox markers and parked items, no claim)', () => {
  async function appliedByPreviousRelease(t: Flow): Promise<void> {
    await placed(t, 'o1');
    const body = payment('o1');
    const current = await t.memory.read<OrderDocument>('o1', 'o1');
    const { claimedPaymentCount: _dropped, ...order } = { ...current!.document, amountPaid: 5, paymentCount: 1 } as OrderDocument & {
      claimedPaymentCount?: number;
    };
    await t.memory.commit('o1', [
      { kind: 'replace', document: order, ifMatch: current!.etag },
      create({
        id: 'inbox|msg-old',
        orderId: 'o1',
        docType: 'inbox',
        messageType: 'PaymentReceived',
        messageId: 'msg-old',
        dedupKey: 'msg-old',
        fingerprint: fingerprintPayload('PaymentReceived', body),
        processedAt: '2026-11-30T11:00:00Z',
        payload: body,
        ttl: 3600,
      } as StoredDocument),
    ]);
  }

  it('takes its redelivery for a duplicate and writes nothing', async () => {
    const t = orderFlow();
    await appliedByPreviousRelease(t);
    const before = JSON.stringify(t.memory.list('o1'));
    expect((await t.send('msg-old', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('duplicate');
    expect(JSON.stringify(t.memory.list('o1'))).toBe(before);
    expect(claimOf(t, 'P-1')).toBeUndefined();
  });

  it('takes a copy under a new MessageId, straddling the deploy, for a duplicate', async () => {
    const t = orderFlow();
    await appliedByPreviousRelease(t);
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('parks no second item for a copy of a payment it parked, and applies it once with the order', async () => {
    const t = orderFlow();
    await leftParked(t, 'o1', 'msg-old', 'PaymentReceived', payment('o1'));
    await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z'))]);
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    await placed(t, 'o1');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect((await t.send('msg-newer', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});

describe('what the release before stored, read closely (src/orders/paymentsBeforeClaims.ts)', () => {
  const marker = (messageId: string, fields: Record<string, unknown>) =>
    create({
      id: `inbox|${messageId}`,
      orderId: 'o1',
      docType: 'inbox',
      messageType: 'PaymentReceived',
      messageId,
      dedupKey: messageId,
      processedAt: '2026-11-30T11:00:00Z',
      ttl: 3600,
      ...fields,
    } as StoredDocument);

  /** The order as the release before left it: `paymentCount` payments applied, none with a claim, and these inbox markers. */
  async function storedByPreviousRelease(t: Flow, paymentCount: number, amountPaid: number, ...markers: ReturnType<typeof marker>[]): Promise<void> {
    await placed(t, 'o1');
    const current = await t.memory.read<OrderDocument>('o1', 'o1');
    const { claimedPaymentCount: _dropped, ...order } = { ...current!.document, amountPaid, paymentCount } as OrderDocument & { claimedPaymentCount?: number };
    await t.memory.commit('o1', [{ kind: 'replace', document: order, ifMatch: current!.etag }, ...markers]);
  }

  it('passes over markers of other payments, of other message types and without a payload: a new payment is applied', async () => {
    const t = orderFlow();
    const other = payment('o1', { paymentId: 'P-9', amount: 7 });
    await storedByPreviousRelease(
      t,
      1,
      7,
      marker('msg-p9', { fingerprint: fingerprintPayload('PaymentReceived', other), payload: other }),
      marker('msg-legacy', { messageType: 'Legacy', fingerprint: 'f', payload: { paymentId: 'P-1' } }),
      marker('msg-bare', { fingerprint: 'f' }),
    );
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 12, paymentCount: 2 });
  });

  it('takes a copy under another key for the same payment although its body differs elsewhere (receivedAt), and the same key with another body for a conflict', async () => {
    const t = orderFlow();
    const body = payment('o1');
    await storedByPreviousRelease(t, 1, 5, marker('msg-old', { fingerprint: fingerprintPayload('PaymentReceived', body), payload: body }));
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1', { receivedAt: '2026-11-30T09:05:00Z' }))).outcome.kind).toBe('duplicate');
    expect((await t.send('msg-old', 'PaymentReceived', payment('o1', { receivedAt: '2026-11-30T09:05:00Z' }), 2)).outcome.kind).toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('takes a copy under another key with another amount for a conflict', async () => {
    const t = orderFlow();
    const body = payment('o1');
    await storedByPreviousRelease(t, 1, 5, marker('msg-old', { fingerprint: fingerprintPayload('PaymentReceived', body), payload: body }));
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1', { amount: 6 }))).outcome.kind).toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  /** A parked item as the release before left it, in a gate it opened (unmarked), for an order not stored yet. */
  async function parkedByPreviousRelease(
    t: Flow,
    messageId: string,
    messageType: 'PaymentReceived' | 'OrderStatusChanged',
    body: Record<string, unknown>,
    state: ParkedItemDocument['state'],
  ): Promise<void> {
    const id = await leftParked(t, 'o1', messageId, messageType, body);
    const item = (await t.memory.read<ParkedItemDocument>('o1', id))!;
    const changed: ParkedItemDocument = { ...item.document, state };
    await t.memory.commit('o1', [{ kind: 'replace', document: changed, ifMatch: item.etag }]);
  }

  it.each([
    { what: 'its own rejected item (a resubmit parks afresh)', messageId: 'msg-old', body: payment('o1'), state: 'rejected' as const },
    { what: 'a rejected item of the payment under another key', messageId: 'msg-other', body: payment('o1'), state: 'rejected' as const },
    {
      what: 'a parked item of another payment under another key',
      messageId: 'msg-other',
      body: payment('o1', { paymentId: 'P-9', amount: 7 }),
      state: 'parked' as const,
    },
  ])('passes over $what and parks the payment', async ({ messageId, body, state }) => {
    const t = orderFlow();
    await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z'))]);
    await parkedByPreviousRelease(t, messageId, 'PaymentReceived', body, state);
    expect((await t.send('msg-old', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('parked');
  });

  // Before its order, a currency is nobody's mismatch yet: only the parked copy can tell the payment changed.
  it('takes a copy, parked before its order under another key, in another currency for a conflict', async () => {
    const t = orderFlow();
    await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z'))]);
    await parkedByPreviousRelease(t, 'msg-old', 'PaymentReceived', payment('o1'), 'parked');
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1', { currency: 'USD' }))).outcome.kind).toBe('conflict');
    expect((await t.send('msg-newer', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
  });

  it('passes over a parked status change under the same key', async () => {
    const t = orderFlow();
    await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z'))]);
    await parkedByPreviousRelease(
      t,
      'msg-old',
      'OrderStatusChanged',
      { orderId: 'o1', status: 'Paid', version: 1, changedAt: '2026-11-30T10:00:00Z' },
      'parked',
    );
    expect((await t.send('msg-old', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('parked');
  });

  it('trusts a gate this release opened (claimed payments only): its parked items are not read', async () => {
    const t = orderFlow();
    // A state no release writes (an unclaimed payment behind a gate marked claimed-only): it shows that the mark alone decides.
    await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z', undefined, true))]);
    await parkedByPreviousRelease(t, 'msg-other', 'PaymentReceived', payment('o1'), 'parked');
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
  });
});
