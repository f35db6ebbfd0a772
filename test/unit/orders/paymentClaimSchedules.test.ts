import { describe, expect, it } from 'vitest';
import { create, replace } from '../../../src/idempotency/index.js';
import type { StoredDocument, WriteOperation } from '../../../src/idempotency/index.js';
import { parkingLotId, parseOrderMessage } from '../../../src/orders/index.js';
import { claimPayment } from '../../../src/orders/paymentClaims.js';
import type { PaymentMessage } from '../../../src/orders/paymentClaims.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { OrderDocument, ParkedItemDocument } from '../../../src/orders/index.js';
import { parkingLot } from '../../../src/orders/parkedItems.js';
import { leftParked, orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// The branches of a payment's claim no other schedule takes: the claim gone between its 409 and the
// read, a takeover of a void claim that loses its race on every attempt, and the payments the
// release before claims stored (parked items, inbox markers) found before a claim is written.
type Flow = ReturnType<typeof orderFlow>;
const claimId = 'payment|P-1';
const claimPartition = `#${claimId}`;
const payment = (orderId: string, overrides: Record<string, unknown> = {}) => paymentReceived(orderId, { paymentId: 'P-1', amount: 5, ...overrides });
const replacesClaim = (_pk: string, operations: readonly WriteOperation[]) =>
  operations.some((op) => op.kind === 'replace' && (op.document as { docType?: string }).docType === 'payment-claim');
const description = (outcome: { kind: string; error?: { description: string } }) => (outcome.kind === 'conflict' ? outcome.error?.description : undefined);

async function placed(t: Flow, orderId: string): Promise<void> {
  expect((await t.send(`m-${orderId}`, 'OrderPlaced', orderPlaced(orderId))).outcome.kind).toBe('created');
}

/** Another writer rewrites the claim (a new etag, the same content): a takeover guarded by the old etag loses. */
async function rewriteClaim(t: Flow): Promise<void> {
  const claim = await t.memory.read(claimPartition, claimId);
  if (!claim) throw new Error('no claim to rewrite');
  await t.memory.commit(claimPartition, [replace(claim.document, claim.etag)]);
}

/** A parked payment of the release before (no claim), in a gate that release opened (unmarked). */
async function parkedByPreviousRelease(t: Flow, state: ParkedItemDocument['state'] = 'parked'): Promise<void> {
  await leftParked(t, 'o1', 'msg-old', 'PaymentReceived', payment('o1'));
  if (state !== 'parked') {
    const item = await t.memory.read<ParkedItemDocument>('o1', 'parked|payment|msg-old');
    await t.memory.commit('o1', [replace({ ...item!.document, state } as ParkedItemDocument, item!.etag)]);
  }
  await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z'))]);
}

describe('a claim that answered 409 and is then gone', () => {
  it('expired between the 409 and the read: the message is retried, naming the claim, and nothing is counted', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    expect((await t.send('msg-a', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('created');
    // The claim's TTL (twice the marker TTL) runs out right after the copy's create met it.
    t.store.beforeRead(
      (pk, id) => pk === claimPartition && id === claimId,
      async () => t.advance(2 * 3600 + 1),
    );
    const copy = await t.send('msg-b', 'PaymentReceived', payment('o1'));
    expect(copy.outcome).toEqual({ kind: 'retry', reason: `payment claim ${claimId} was reported to exist but could not be read` });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('claimPayment decides it there (a retry), without going on to the effect', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    await t.send('msg-a', 'PaymentReceived', payment('o1'));
    t.store.beforeRead(
      (pk, id) => pk === claimPartition && id === claimId,
      async () => t.advance(2 * 3600 + 1),
    );
    const message = parseOrderMessage(envelopeFromTriggerMetadata({ messageId: 'msg-b', subject: 'PaymentReceived' }), payment('o1'), {
      maxMessageBytes: 262_144,
    }) as PaymentMessage;
    expect(await claimPayment(message, t.ctx)).toEqual({
      kind: 'decided',
      outcome: { kind: 'retry', reason: `payment claim ${claimId} was reported to exist but could not be read` },
    });
  });
});

describe('taking over a void claim (its message was rejected)', () => {
  async function voidClaim(t: Flow): Promise<void> {
    expect((await t.send('pay-usd', 'PaymentReceived', payment('o1', { currency: 'USD' }), 1, { 'idempotency-key': 'pay-K' })).outcome.kind).toBe('parked');
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({
      kind: 'created',
      rejectedParked: [expect.objectContaining({ reason: 'CurrencyMismatch' })],
    });
  }

  it('loses its race on every attempt: the message is retried, naming the claim and the attempts, and counts nothing', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 3 });
    await voidClaim(t);
    t.store.beforeCommit(replacesClaim, () => rewriteClaim(t), 3);
    const eur = await t.send('pay-eur', 'PaymentReceived', payment('o1'), 1, { 'idempotency-key': 'pay-K' });
    expect(eur.outcome).toEqual({ kind: 'retry', reason: `payment claim ${claimId} changed under 3 attempts in a row` });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
    // Its redelivery, with no one in the way, takes the claim over and applies the payment once.
    expect((await t.send('pay-eur', 'PaymentReceived', payment('o1'), 2, { 'idempotency-key': 'pay-K' })).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('claimPayment decides it there (a retry), without going on to the effect', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 2 });
    await voidClaim(t);
    t.store.beforeCommit(replacesClaim, () => rewriteClaim(t), 2);
    const envelope = envelopeFromTriggerMetadata({ messageId: 'pay-eur', subject: 'PaymentReceived', applicationProperties: { 'idempotency-key': 'pay-K' } });
    const message = parseOrderMessage(envelope, payment('o1'), { maxMessageBytes: 262_144 }) as PaymentMessage;
    expect(await claimPayment(message, t.ctx)).toEqual({
      kind: 'decided',
      outcome: { kind: 'retry', reason: `payment claim ${claimId} changed under 2 attempts in a row` },
    });
  });

  it('loses its race once and wins the next attempt: the payment is applied once', async () => {
    const t = orderFlow({ maxConcurrencyAttempts: 3 });
    await voidClaim(t);
    t.store.beforeCommit(replacesClaim, () => rewriteClaim(t), 1);
    expect((await t.send('pay-eur', 'PaymentReceived', payment('o1'), 1, { 'idempotency-key': 'pay-K' })).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});

describe('a payment the release before claims parked (no claim), found before claiming', () => {
  it('a copy under a new MessageId, received at another time, is a duplicate, and writes nothing', async () => {
    const t = orderFlow();
    await parkedByPreviousRelease(t);
    const commits = t.store.commits;
    expect((await t.send('msg-new', 'PaymentReceived', payment('o1', { receivedAt: '2026-11-30T09:05:00Z' }))).outcome).toEqual({ kind: 'duplicate' });
    expect(t.store.commits).toBe(commits);
    expect(t.parked('o1').map((p) => p.id)).toEqual(['parked|payment|msg-old']);
  });

  it('another payload under its own key is a conflict, though the payment is the same', async () => {
    const t = orderFlow();
    await parkedByPreviousRelease(t);
    const other = await t.send('msg-old', 'PaymentReceived', payment('o1', { receivedAt: '2026-11-30T09:05:00Z' }), 2);
    expect(other.outcome.kind).toBe('conflict');
    expect(description(other.outcome as never)).toContain('payment P-1 is parked under key msg-old');
  });

  it('another amount under a new MessageId is a conflict naming the key it is parked under, and parks nothing', async () => {
    const t = orderFlow();
    await parkedByPreviousRelease(t);
    const other = await t.send('msg-new', 'PaymentReceived', payment('o1', { amount: 50 }));
    expect(other.outcome.kind).toBe('conflict');
    expect(description(other.outcome as never)).toContain('payment P-1 is parked under key msg-old');
    expect(t.parked('o1').map((p) => p.id)).toEqual(['parked|payment|msg-old']);
  });

  it('discarded by an operator: its redelivery is a duplicate decided with no write (no claim, not parked afresh)', async () => {
    const t = orderFlow();
    await parkedByPreviousRelease(t, 'discarded');
    const commits = t.store.commits;
    expect((await t.send('msg-old', 'PaymentReceived', payment('o1'), 2)).outcome).toEqual({ kind: 'duplicate' });
    expect(t.store.commits).toBe(commits);
    expect(t.parked('o1').map((p) => [p.id, p.state])).toEqual([['parked|payment|msg-old', 'discarded']]);
  });

  it('rejected: its redelivery is parked afresh (a rejected item is not a live copy)', async () => {
    const t = orderFlow();
    await parkedByPreviousRelease(t, 'rejected');
    expect((await t.send('msg-old', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('parked');
    expect(t.parked('o1').map((p) => p.state)).toEqual(['parked']);
  });

  for (const [name, messageId] of [
    ['its redelivery', 'msg-old'],
    ['a copy under a new MessageId', 'msg-new'],
  ] as const) {
    it(`applied by its order arriving while ${name} looked (the order read found none): a duplicate decided with no write, counted once`, async () => {
      const t = orderFlow();
      await parkedByPreviousRelease(t);
      let first = true;
      let commits = 0;
      t.store.beforeRead(
        (_pk, id) => id === parkingLotId('o1') && first && !(first = false),
        async () => {
          expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 });
          commits = t.store.commits;
        },
      );
      expect(t.parked('o1')).toHaveLength(1);
      const outcome = await t.send(messageId, 'PaymentReceived', payment('o1'), messageId === 'msg-old' ? 2 : 1);
      expect(t.parked('o1').map((p) => [p.id, p.state])).toEqual([['parked|payment|msg-old', 'applied']]);
      expect(outcome.outcome).toEqual({ kind: 'duplicate' });
      expect(t.store.commits).toBe(commits);
      expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    });
  }
});

describe('a payment the release before claims applied (inbox marker, no claim), found before claiming', () => {
  it('another amount under a new MessageId is a conflict naming the key it was applied under', async () => {
    const t = orderFlow();
    await placed(t, 'o1');
    const body = payment('o1');
    const current = await t.memory.read<OrderDocument>('o1', 'o1');
    const { claimedPaymentCount: _dropped, ...order } = { ...current!.document, amountPaid: 5, paymentCount: 1 } as OrderDocument & {
      claimedPaymentCount?: number;
    };
    await t.memory.commit('o1', [
      replace(order as StoredDocument, current!.etag),
      create({
        id: 'inbox|msg-old',
        orderId: 'o1',
        docType: 'inbox',
        messageType: 'PaymentReceived',
        messageId: 'msg-old',
        dedupKey: 'msg-old',
        fingerprint: 'fp-old',
        processedAt: '2026-11-30T11:00:00Z',
        payload: body,
        ttl: 3600,
      } as StoredDocument),
    ]);
    const other = await t.send('msg-new', 'PaymentReceived', payment('o1', { amount: 50 }));
    expect(other.outcome.kind).toBe('conflict');
    expect(description(other.outcome as never)).toContain('payment P-1 was applied under key msg-old');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});
