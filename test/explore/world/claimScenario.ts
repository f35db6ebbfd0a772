import fc from 'fast-check';
import type { WriteFate } from './fates.js';
import type { ModelMessage, OrderScenario } from './orderScenario.js';
import { parkingHorizonSeconds, sweepMinAgeSeconds } from './orderScenario.js';

/**
 * The payment-claims scenario (`--property order-flows/payment-claims`): payments whose one
 * `paymentId` travels under several keys, naming either order, amount or currency, on orders whose
 * `amountPaid` other payments take up to the exact-sum bound, with the operator resubmitting what the
 * sweeper rejected. A paymentId is the business identity across orders (one claim per paymentId), so
 * the bodies are drawn from a small pool and the keys from a few per paymentId: copies under a new
 * MessageId and a new key, and other payloads under another key or under the same one, are common.
 */

/** The orders and their currencies: a payment in one is in the other's "other currency". */
export const claimOrderCurrencies: Readonly<Record<string, 'EUR' | 'USD'>> = { o1: 'EUR', o2: 'USD' };
const claimOrderIds = Object.keys(claimOrderCurrencies);

const placedAt = '2026-11-30T08:00:00Z';
const receivedAt = '2026-11-30T09:00:00Z';

interface PaymentBody {
  readonly paymentId: number;
  readonly order: number;
  readonly amount: number;
  readonly currency: 'EUR' | 'USD';
}

/**
 * One producer send of a payment body: under a key of its paymentId's, as one or two copies (new
 * MessageIds, same key); or, once in a while, under the MessageId of an earlier send (a sender
 * correcting a payload and sending it again as the same message).
 */
interface PaymentSend {
  readonly body: number;
  readonly key: number;
  readonly copies: number;
  readonly reuseMessageIdOf?: number;
}

const paymentBodyArb: fc.Arbitrary<PaymentBody> = fc.record({
  paymentId: fc.integer({ min: 1, max: 2 }),
  order: fc.nat(claimOrderIds.length - 1),
  amount: fc.integer({ min: 1, max: 3 }),
  currency: fc.constantFrom('EUR' as const, 'USD' as const),
});

const paymentSendArb: fc.Arbitrary<PaymentSend> = fc.record(
  {
    body: fc.nat(2),
    key: fc.nat(2),
    copies: fc.integer({ min: 1, max: 2 }),
    reuseMessageIdOf: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat(2) }),
  },
  { requiredKeys: ['body', 'key', 'copies'] },
);

/** How much room other payments leave on an order once it is stored (undefined: none come). */
const roomLeftArb = fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 6 }) });

const faultArb: fc.Arbitrary<WriteFate> = fc.constantFrom<WriteFate>('refused-429', 'refused-503', 'refused-408', 'lost-408', 'lost-reset');

export const paymentKey = (paymentId: number, key: number): string => `pay-P${paymentId}-k${key}`;

function placedMessages(orderId: string, copies: number): ModelMessage[] {
  const currency = claimOrderCurrencies[orderId]!;
  return Array.from({ length: copies }, (_, i) => ({
    messageId: `${orderId}-placed${i}`,
    type: 'OrderPlaced' as const,
    key: `place-${orderId}`,
    orderId,
    body: { orderId, customerId: 'c1', currency, lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 10 }], placedAt },
  }));
}

function paymentSendMessages(bodies: readonly PaymentBody[], sends: readonly PaymentSend[]): ModelMessage[] {
  return sends.flatMap((send, i) => {
    const b = bodies[send.body % bodies.length]!;
    const orderId = claimOrderIds[b.order]!;
    const reused = send.reuseMessageIdOf !== undefined && send.reuseMessageIdOf < i ? `pay${send.reuseMessageIdOf}` : undefined;
    return Array.from({ length: send.copies }, (_, copy) => ({
      messageId: `pay${i}${copy === 0 ? '' : `-copy${copy}`}`,
      ...(reused !== undefined && copy === 0 ? { messageId: reused, worldName: `pay${i}` } : {}),
      type: 'PaymentReceived' as const,
      key: paymentKey(b.paymentId, send.key),
      orderId,
      body: { orderId, paymentId: `P${b.paymentId}`, amount: b.amount, currency: b.currency, receivedAt },
    }));
  });
}

export function claimScenarioArb(): fc.Arbitrary<OrderScenario> {
  return fc
    .record({
      // Each order placed once, twice (a re-send), or never (its payments wait out the horizon).
      placed: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.integer({ min: 1, max: 2 }) }), {
        minLength: claimOrderIds.length,
        maxLength: claimOrderIds.length,
      }),
      bodies: fc.array(paymentBodyArb, { minLength: 1, maxLength: 3 }),
      sends: fc.array(paymentSendArb, { minLength: 1, maxLength: 4 }),
      roomLeft: fc.array(roomLeftArb, { minLength: claimOrderIds.length, maxLength: claimOrderIds.length }),
      lockLost: fc.array(fc.nat(10), { maxLength: 2 }),
      // Mostly past the horizon, with a sweep or more behind: what the sweeper rejects, the operator resubmits.
      ticks: fc.array(fc.constantFrom(sweepMinAgeSeconds + 1, parkingHorizonSeconds + 1, parkingHorizonSeconds + 1), { maxLength: 3 }),
      sweeps: fc.integer({ min: 0, max: 3 }),
      resubmits: fc.integer({ min: 0, max: 2 }),
      armTimersAfter: fc.nat(8),
      faults: fc.array(fc.record({ at: fc.nat(24), fate: faultArb }), { maxLength: 2 }),
      crashes: fc.array(fc.record({ delivery: fc.nat(10), atAwait: fc.integer({ min: 1, max: 8 }), afterApplying: fc.boolean() }), { maxLength: 2 }),
    })
    .map(({ placed, bodies, sends, roomLeft, lockLost, ticks, sweeps, resubmits, armTimersAfter, faults, crashes }) => {
      const messages = [...claimOrderIds.flatMap((orderId, i) => placedMessages(orderId, placed[i]!)), ...paymentSendMessages(bodies, sends)];
      const fates: WriteFate[] = [];
      for (const { at, fate } of faults) fates[at] = fate;
      return {
        orderIds: claimOrderIds,
        messages,
        lockLost: lockLost.filter((i) => i < messages.length),
        ticks,
        sweeps,
        fates: Array.from(fates, (f) => f ?? 'applied'),
        crashes,
        byPaymentId: true,
        currencies: claimOrderCurrencies,
        roomLeft: Object.fromEntries(claimOrderIds.flatMap((orderId, i) => (roomLeft[i] === undefined ? [] : [[orderId, roomLeft[i]]]))),
        operatorResubmits: resubmits,
        armTimersAfter,
      };
    });
}

/**
 * A wait between two sweeps that a rejected item's resubmit still makes (the world's operators' horizon
 * is a marker retention less a minute, 3540 s, counted from the item's last parking): a parking horizon
 * and one such wait in a row stay inside it.
 */
export const claimRoundWaitSeconds = 2900;

/**
 * The claim-rounds scenario (`--property order-flows/claim-rounds`): payments whose orders never come,
 * rejected `OrderNeverArrived` and resubmitted by the operator round after round, the clock moving by
 * half a horizon, a horizon or a long wait with the sweeper's timer after each move, until a parked
 * item has waited past its first claim's life (twice the marker retention). The claim must still be
 * there, naming the item's key, for as long as the item waits (orderInvariants.ts checkBeforeBackstop).
 */
export function claimRoundsScenarioArb(): fc.Arbitrary<OrderScenario> {
  return fc
    .record({
      // One payment body, sent under its paymentId's keys as copies: a conflict's record would run out in these long waits.
      bodies: fc.array(paymentBodyArb, { minLength: 1, maxLength: 1 }),
      sends: fc.array(paymentSendArb, { minLength: 1, maxLength: 3 }),
      ticks: fc.array(fc.constantFrom(parkingHorizonSeconds / 2, parkingHorizonSeconds + 1, claimRoundWaitSeconds), { minLength: 3, maxLength: 6 }),
    })
    .map(({ bodies, sends, ticks }) => {
      const messages = paymentSendMessages(bodies, sends);
      return {
        orderIds: claimOrderIds,
        messages,
        lockLost: [],
        ticks,
        sweeps: 0,
        // No refused writes: a resubmit that fails leaves its item rejected past the operators' horizon, and then
        // it runs out (a rejection not acted on), which this scenario's long waits would report as a loss.
        fates: [],
        crashes: [],
        byPaymentId: true,
        currencies: claimOrderCurrencies,
        operatorResubmits: ticks.length,
        sweepAfterEachTick: true,
        armTimersAfter: messages.length,
      };
    });
}
