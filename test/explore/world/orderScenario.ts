import fc from 'fast-check';
import type { CrashPoint, WriteFate } from './fates.js';

export type OrderMessageKind = 'OrderPlaced' | 'PaymentReceived' | 'OrderStatusChanged';

/** One broker message a producer sent: its own MessageId, the key it pins, its body. */
export interface ModelMessage {
  readonly messageId: string;
  readonly type: OrderMessageKind;
  /** The `idempotency-key` property: a re-send under a new MessageId keeps it, a conflicting payload too. */
  readonly key: string;
  readonly orderId: string;
  readonly body: Readonly<Record<string, unknown>>;
  /** The world's own name for it, where its MessageId is another message's too (a sender reusing MessageIds). */
  readonly worldName?: string;
}

/** How the world tells messages apart (deliveries, broker fates): its MessageId, unless that is reused. */
export const worldNameOf = (m: ModelMessage): string => m.worldName ?? m.messageId;

/**
 * What the world is given to do; the scheduler decides the order. Messages that share a key are
 * re-sends (the same body) or conflicts (another body), as the generator happened to pick them.
 */
export interface OrderScenario {
  readonly orderIds: readonly string[];
  readonly messages: readonly ModelMessage[];
  /** Messages delivered a second time while the first delivery may still run (its lock expired). */
  readonly lockLost: readonly number[];
  /** Clock moves, in seconds: past the sweeper's minimum age, past the parking horizon. */
  readonly ticks: readonly number[];
  /** Sweeper runs while messages are being processed. */
  readonly sweeps: number;
  /** The fate of the n-th write served (the rest are applied). */
  readonly fates: readonly WriteFate[];
  readonly crashes: readonly CrashPoint[];
  /** Payments checked by paymentId across orders (world/claimInvariants.ts), as the payment-claims scenario sends them, rather than by key. */
  readonly byPaymentId?: boolean;
  /** Each order's currency, where not EUR (the payment-claims scenario places one in USD). */
  readonly currencies?: Readonly<Record<string, string>>;
  /**
   * Orders that other payments (not in the scenario) fill once stored, at a moment the scheduler
   * picks, up to this much below the exact-sum bound (src/orders/money.ts maxExactAmount).
   */
  readonly roomLeft?: Readonly<Record<string, number>>;
  /** The clock's ticks and the sweeper's timer start once this many deliveries have ended (absent: from the start; all ended: then). */
  readonly armTimersAfter?: number;
  /** Operator runs of `parked resubmit --all --reason OrderNeverArrived` (src/cli/parkedCommands.ts), each after a sweep that rejected items. */
  readonly operatorResubmits?: number;
  /**
   * The sweeper's timer fires with every tick (until a run gets through), as its schedule does in
   * production: for ticks longer than a parked item's time-to-live, which an unswept item would outlive.
   */
  readonly sweepAfterEachTick?: boolean;
}

/** The currency an order is placed in. */
export const orderCurrency = (scenario: Pick<OrderScenario, 'currencies'>, orderId: string): string => scenario.currencies?.[orderId] ?? 'EUR';

export const parkingHorizonSeconds = 600;
export const sweepMinAgeSeconds = 60;

const placedAt = '2026-11-30T08:00:00Z';

function orderPlacedMessages(orderId: string, customers: readonly string[]): ModelMessage[] {
  return customers.map((customerId, i) => ({
    messageId: `${orderId}-placed${i}`,
    type: 'OrderPlaced',
    key: `place-${orderId}`,
    orderId,
    body: { orderId, customerId, currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 10 }], placedAt },
  }));
}

interface PaymentPlan {
  readonly paymentId: number;
  readonly amount: number;
  readonly currency: 'EUR' | 'USD';
}

function paymentMessages(orderId: string, payments: readonly PaymentPlan[]): ModelMessage[] {
  return payments.map((p, i) => ({
    messageId: `${orderId}-pay${i}`,
    type: 'PaymentReceived',
    key: `pay-${orderId}-${p.paymentId}`,
    orderId,
    body: { orderId, paymentId: `${orderId}-p${p.paymentId}`, amount: p.amount, currency: p.currency, receivedAt: '2026-11-30T09:00:00Z' },
  }));
}

interface StatusPlan {
  readonly version: number;
  readonly status: 'Paid' | 'Shipped' | 'Cancelled';
}

function statusMessages(orderId: string, statuses: readonly StatusPlan[]): ModelMessage[] {
  return statuses.map((s, i) => ({
    messageId: `${orderId}-st${i}`,
    type: 'OrderStatusChanged',
    key: `status-${orderId}-v${s.version}`,
    orderId,
    body: { orderId, status: s.status, version: s.version, changedAt: `2026-11-30T10:00:0${s.version}Z` },
  }));
}

/** Mostly applied; a few writes refused or applied with their answer lost. */
const faultArb: fc.Arbitrary<WriteFate> = fc.constantFrom<WriteFate>('refused-429', 'refused-503', 'refused-408', 'lost-408', 'lost-reset');

const orderPlanArb = fc.record({
  // No OrderPlaced: its early arrivals wait out the horizon; two: a re-send (same customer) or a conflict.
  customers: fc.oneof(
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    { weight: 4, arbitrary: fc.array(fc.constantFrom('c1', 'c2'), { minLength: 1, maxLength: 2 }) },
  ),
  payments: fc.array(
    fc.record({
      paymentId: fc.integer({ min: 1, max: 3 }),
      amount: fc.integer({ min: 1, max: 3 }),
      currency: fc.oneof({ weight: 5, arbitrary: fc.constant('EUR' as const) }, { weight: 1, arbitrary: fc.constant('USD' as const) }),
    }),
    { maxLength: 4 },
  ),
  statuses: fc.array(
    fc.record({ version: fc.integer({ min: 1, max: 3 }), status: fc.constantFrom('Paid' as const, 'Shipped' as const, 'Cancelled' as const) }),
    { maxLength: 3 },
  ),
});

export interface ScenarioBounds {
  readonly maxOrders: number;
  readonly maxFaults: number;
  readonly maxCrashes: number;
}

export const defaultBounds: ScenarioBounds = { maxOrders: 2, maxFaults: 3, maxCrashes: 2 };

export function orderScenarioArb(bounds: ScenarioBounds = defaultBounds): fc.Arbitrary<OrderScenario> {
  return fc
    .record({
      orders: fc.array(orderPlanArb, { minLength: 1, maxLength: bounds.maxOrders }),
      lockLost: fc.array(fc.nat(12), { maxLength: 2 }),
      ticks: fc.array(fc.constantFrom(1, sweepMinAgeSeconds + 1, parkingHorizonSeconds + 1), { maxLength: 3 }),
      sweeps: fc.integer({ min: 0, max: 2 }),
      faults: fc.array(fc.record({ at: fc.nat(24), fate: faultArb }), { maxLength: bounds.maxFaults }),
      crashes: fc.array(fc.record({ delivery: fc.nat(12), atAwait: fc.integer({ min: 1, max: 6 }), afterApplying: fc.boolean() }), {
        maxLength: bounds.maxCrashes,
      }),
    })
    .map(({ orders, lockLost, ticks, sweeps, faults, crashes }) => {
      const orderIds = orders.map((_, i) => `o${i + 1}`);
      const messages = orders.flatMap((plan, i) => [
        ...orderPlacedMessages(orderIds[i]!, plan.customers),
        ...paymentMessages(orderIds[i]!, plan.payments),
        ...statusMessages(orderIds[i]!, plan.statuses),
      ]);
      const fates: WriteFate[] = [];
      for (const { at, fate } of faults) fates[at] = fate;
      return {
        orderIds,
        messages,
        lockLost: lockLost.filter((i) => i < messages.length),
        ticks,
        sweeps,
        fates: Array.from(fates, (f) => f ?? 'applied'),
        crashes,
      };
    });
}
