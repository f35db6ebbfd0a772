import { describe, expect, it } from 'vitest';
import { create, fingerprintPayload, replace } from '../../../src/idempotency/index.js';
import type { OrderDocument, ParkedItemDocument, ParkingLotDocument } from '../../../src/orders/index.js';
import { drainParkedItems } from '../../../src/orders/applyParkedItems.js';
import { fingerprintsOfParked } from '../../../src/orders/sameRequest.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';

// Fingerprints are taken over the validated payload. Releases before took them over the body as
// received: what they stored must still name the same request, or a redelivery of a message that
// carried a field the schema ignores becomes a spurious conflict after a deploy.
type Flow = ReturnType<typeof orderFlow>;

/** Rewrites a stored document's fingerprint field as the previous release wrote it: over the raw body. */
async function asPreviousReleaseWrote(
  t: Flow,
  orderId: string,
  id: string,
  field: 'fingerprint' | 'statusFingerprint',
  type: string,
  rawBody: unknown,
): Promise<void> {
  const stored = await t.memory.read<OrderDocument>(orderId, id);
  if (!stored) throw new Error(`${id} is not stored`);
  const result = await t.memory.commit(orderId, [replace({ ...stored.document, [field]: fingerprintPayload(type, rawBody) } as OrderDocument, stored.etag)]);
  expect(result.kind).toBe('committed');
}

describe('the same request, whichever release fingerprinted it', () => {
  it('a field the schema ignores changes nothing: the same order, payment and status are duplicates', async () => {
    const t = orderFlow();
    const placed = orderPlaced('o1');
    await t.send('m-o1', 'OrderPlaced', placed);
    expect((await t.send('m-o1', 'OrderPlaced', { ...placed, type: 'OrderPlaced', note: 'x' }, 2)).outcome).toEqual({ kind: 'duplicate' });
    const pay = paymentReceived('o1', { amount: 5 });
    await t.send('pay-1', 'PaymentReceived', pay);
    expect((await t.send('pay-1', 'PaymentReceived', { ...pay, channel: 'till' }, 2)).outcome).toEqual({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a field the schema knows, changed under the same key, is still a conflict', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const pay = paymentReceived('o1', { amount: 5 });
    await t.send('pay-1', 'PaymentReceived', { ...pay, note: 'a' });
    expect((await t.send('pay-1', 'PaymentReceived', { ...pay, amount: 6, note: 'a' }, 2)).outcome).toMatchObject({ kind: 'conflict' });
  });

  it('reads an order, an inbox marker and a status fingerprint written over the raw body by the previous release', async () => {
    const t = orderFlow();
    const placed = { ...orderPlaced('o1'), type: 'OrderPlaced' };
    await t.send('m-o1', 'OrderPlaced', placed);
    await asPreviousReleaseWrote(t, 'o1', 'o1', 'fingerprint', 'OrderPlaced', placed);
    expect((await t.send('m-o1', 'OrderPlaced', placed, 2)).outcome).toEqual({ kind: 'duplicate' });

    const status = { ...orderStatusChanged('o1', 2), source: 'wms' };
    await t.send('st-2', 'OrderStatusChanged', status);
    await asPreviousReleaseWrote(t, 'o1', 'o1', 'statusFingerprint', 'OrderStatusChanged', status);
    expect((await t.send('st-2', 'OrderStatusChanged', status, 2)).outcome).toEqual({ kind: 'duplicate' });

    const pay = { ...paymentReceived('o1', { amount: 5 }), channel: 'till' };
    await t.send('pay-1', 'PaymentReceived', pay);
    const markerId = t.memory.list('o1').find((d) => (d as { docType?: string }).docType === 'inbox')?.id ?? '';
    await asPreviousReleaseWrote(t, 'o1', markerId, 'fingerprint', 'PaymentReceived', pay);
    expect((await t.send('pay-1', 'PaymentReceived', pay, 2)).outcome).toEqual({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1, statusVersion: 2 });
  });

  it('applies a parked item the previous release wrote (raw-body fingerprint, stripped payload), and takes its stripped copy as the same request', async () => {
    const t = orderFlow();
    const pay = paymentReceived('o1', { amount: 5 });
    const raw = { ...pay, type: 'PaymentReceived' };
    const item = {
      id: 'parked|payment|pay-1',
      orderId: 'o1',
      docType: 'parked',
      state: 'parked',
      messageType: 'PaymentReceived',
      messageId: 'pay-1',
      dedupKey: 'pay-1',
      fingerprint: fingerprintPayload('PaymentReceived', raw),
      payload: pay,
      parkedAt: '2026-11-30T11:00:00.000Z',
    } as ParkedItemDocument;
    await t.memory.commit('o1', [
      create(item),
      create({ id: 'parking-lot|o1', orderId: 'o1', docType: 'parking-lot', state: 'open', changedAt: item.parkedAt } as ParkingLotDocument),
    ]);
    expect((await t.send('pay-1~resubmit-1', 'PaymentReceived', pay, 1, { 'idempotency-key': 'pay-1' })).outcome).toEqual({ kind: 'duplicate' });
    expect((await t.send('pay-1', 'PaymentReceived', raw, 2)).outcome).toEqual({ kind: 'duplicate' });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 });
    expect((await t.send('pay-1', 'PaymentReceived', raw, 3)).outcome).toEqual({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});

describe('an item this release parked, met by what the previous release applied during a deploy', () => {
  it('a payment the previous release counted on the normal path (its marker over the raw body) is the parked item, not a conflict', async () => {
    const t = orderFlow();
    const raw = { ...paymentReceived('o1', { amount: 5 }), channel: 'till' };
    await t.send('pay-1', 'PaymentReceived', raw);
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'parked', receivedJson: JSON.stringify(raw) })]);
    // The order is stored by a batch that does not take the item (it is left for the drain), then an
    // instance of the previous release counts a copy of pay-1 on the normal path: its marker's fingerprint is over the raw body.
    const item = t.parked('o1')[0]!;
    await t.memory.commit('o1', [replace({ ...item, state: 'rejected' } as ParkedItemDocument, (await t.memory.read('o1', item.id))!.etag)]);
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 0 });
    expect((await t.send('pay-1', 'PaymentReceived', raw, 2)).outcome).toEqual({ kind: 'created' });
    const markerId = t.memory.list('o1').find((d) => (d as { docType?: string }).docType === 'inbox')?.id ?? '';
    await asPreviousReleaseWrote(t, 'o1', markerId, 'fingerprint', 'PaymentReceived', raw);
    const again = t.parked('o1')[0]!;
    await t.memory.commit('o1', [replace({ ...again, state: 'parked' } as ParkedItemDocument, (await t.memory.read('o1', again.id))!.etag)]);

    const drained = await drainParkedItems('o1', t.ctx);
    expect(drained).toEqual({ applied: 1, rejected: [] });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'applied' })]);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a status the previous release applied on the normal path (its fingerprint over the raw body) is the parked item at that version, not a conflict', async () => {
    const t = orderFlow();
    const raw = { ...orderStatusChanged('o1', 2), source: 'wms' };
    await t.send('st-2', 'OrderStatusChanged', raw);
    const item = t.parked('o1')[0]!;
    expect(item).toMatchObject({ state: 'parked', receivedJson: JSON.stringify(raw) });
    await t.memory.commit('o1', [replace({ ...item, state: 'rejected' } as ParkedItemDocument, (await t.memory.read('o1', item.id))!.etag)]);
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 0 });
    expect((await t.send('st-2', 'OrderStatusChanged', raw, 2)).outcome).toEqual({ kind: 'created' });
    await asPreviousReleaseWrote(t, 'o1', 'o1', 'statusFingerprint', 'OrderStatusChanged', raw);
    const again = t.parked('o1')[0]!;
    await t.memory.commit('o1', [replace({ ...again, state: 'parked' } as ParkedItemDocument, (await t.memory.read('o1', again.id))!.etag)]);

    const drained = await drainParkedItems('o1', t.ctx);
    expect(drained).toEqual({ applied: 1, rejected: [] });
    expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'applied', appliedAs: 'stale' })]);
    expect(await t.order('o1')).toMatchObject({ statusVersion: 2 });
  });
});

describe('fingerprintsOfParked', () => {
  const payload = paymentReceived('o1', { amount: 5 });
  const item = { fingerprint: fingerprintPayload('PaymentReceived', payload), messageType: 'PaymentReceived' as const, payload };

  it('answers to the stored form, the validated payload and the body kept as received, each once', () => {
    const raw = { ...payload, channel: 'till' };
    expect(fingerprintsOfParked({ ...item, receivedJson: JSON.stringify(raw) })).toEqual([item.fingerprint, fingerprintPayload('PaymentReceived', raw)]);
    expect(fingerprintsOfParked(item)).toEqual([item.fingerprint]);
  });

  it('a kept body that is not JSON adds no form, and does not throw', () => {
    expect(fingerprintsOfParked({ ...item, receivedJson: '{"orderId":' })).toEqual([item.fingerprint]);
  });
});
