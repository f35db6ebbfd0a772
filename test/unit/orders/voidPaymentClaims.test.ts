import { describe, expect, it } from 'vitest';
import { parkingLotId } from '../../../src/orders/index.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';

// A payment's claim is written before its effect; a claim whose message was then rejected (in
// another currency than its order, found only once the order came) holds no effect, and must not
// turn the genuine payment under the same paymentId into a conflict. Found by the exploration suite.
const usd = (orderId: string) => paymentReceived(orderId, { paymentId: 'p-1', amount: 5, currency: 'USD' });
const eur = (orderId: string) => paymentReceived(orderId, { paymentId: 'p-1', amount: 5, currency: 'EUR' });

describe('a payment claim whose message was rejected', () => {
  it('parked, then rejected in another currency when its order came: the payment in the order currency is applied, once', async () => {
    const t = orderFlow();
    expect((await t.send('pay-usd', 'PaymentReceived', usd('o1'), 1, { 'idempotency-key': 'pay-K' })).outcome).toMatchObject({ kind: 'parked' });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({
      kind: 'created',
      rejectedParked: [expect.objectContaining({ reason: 'CurrencyMismatch' })],
    });
    expect((await t.send('pay-eur', 'PaymentReceived', eur('o1'), 1, { 'idempotency-key': 'pay-K' })).outcome).toEqual({ kind: 'created' });
    expect((await t.send('pay-eur-again', 'PaymentReceived', eur('o1'), 1, { 'idempotency-key': 'pay-K2' })).outcome).toEqual({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('rejected in another currency after its order came while it looked: the payment in the order currency is applied, once', async () => {
    const t = orderFlow();
    let firstGateRead = true;
    t.store.beforeRead(
      (_pk, id) => id === parkingLotId('o1') && firstGateRead && !(firstGateRead = false),
      async () => expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created' }),
    );
    expect((await t.send('pay-usd', 'PaymentReceived', usd('o1'), 1, { 'idempotency-key': 'pay-K' })).outcome).toMatchObject({ kind: 'invalid' });
    expect((await t.send('pay-eur', 'PaymentReceived', eur('o1'), 1, { 'idempotency-key': 'pay-K' })).outcome).toEqual({ kind: 'created' });
    expect((await t.send('pay-usd', 'PaymentReceived', usd('o1'), 2, { 'idempotency-key': 'pay-K' })).outcome).toMatchObject({ kind: 'invalid' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('still a conflict while the claiming message may yet apply it (no rejection recorded): never two effects', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect((await t.send('pay-eur', 'PaymentReceived', eur('o1'), 1, { 'idempotency-key': 'pay-K' })).outcome).toEqual({ kind: 'created' });
    expect((await t.send('pay-other', 'PaymentReceived', { ...eur('o1'), amount: 6 }, 1, { 'idempotency-key': 'pay-L' })).outcome).toMatchObject({
      kind: 'conflict',
    });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});
