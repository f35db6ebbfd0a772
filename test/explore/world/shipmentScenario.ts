import fc from 'fast-check';
import type { CarrierFate } from './carrierModel.js';
import type { CrashPoint, WriteFate } from './fates.js';

/** The world's settings, scaled as the defaults are (docs/settings.md), the budget shortened so that a run reaches it. */
export const shipmentTimes = {
  /** SHIPMENT_LEASE_SECONDS. */
  leaseSeconds: 60,
  /** QUEUE_LOCK_DURATION_SECONDS: a crashed worker's lock lapses after it, and the message comes back. */
  lockSeconds: 60,
  /** LOCK_RENEWAL_MAX_SECONDS: a delivery still running after it loses its lock, and the message comes back beside it. */
  lockRenewalSeconds: 300,
  /** SHIPMENT_RECONCILE_SCHEDULE: every 2 minutes. */
  reconcileEverySeconds: 120,
  /** SHIPMENT_RECONCILE_MAX_ATTEMPTS, lowered so that a few rounds reach it. */
  reconcileMaxAttempts: 2,
  /** TRANSIENT_RETRY_BUDGET_SECONDS, scaled down from 24 h. */
  transientBudgetSeconds: 20 * 60,
  /** TRANSIENT_RETRY_IN_INVOCATION_MS, lowered: a pause moves the clock 2 s, so at most two retries in an invocation. */
  inInvocationMs: 4_000,
  /** DELAYED_RETRY_FIRST_DELAY_SECONDS and _MAX_DELAY_SECONDS, the cap scaled down. */
  firstDelaySeconds: 30,
  maxDelaySeconds: 240,
  /**
   * How long the carrier keeps a key, scaled down from Stripe's 24 h: longer than the budget, as it is
   * with the defaults. (A carrier that forgets a key before a record in progress under it is settled
   * can book it twice: the design's assumption, not something the flows can check.)
   */
  carrierKeyRetentionSeconds: 30 * 60,
} as const;

/**
 * What the world is given to do; the scheduler decides the order. Each order is stored before the
 * run, with the OrderAccepted event its outbox publishes; that event is delivered once, and maybe
 * again while the first delivery runs (its lock lost), and maybe resubmitted by an operator.
 * Retries go through delayed-retry copies (DELAYED_RETRY_ENABLED, the default).
 */
export interface ShipmentScenario {
  readonly orderIds: readonly string[];
  /** Orders whose event is delivered a second time while its first delivery may still run. */
  readonly lockLost: readonly number[];
  /** Orders whose event an operator resubmits (a new MessageId, the event's key pinned). */
  readonly resubmits: readonly number[];
  /** Payments applied to an order while its shipment is booked: the order's etag moves under the booking's batch. */
  readonly orderChanges: readonly number[];
  /** Clock moves, in seconds: a second, past a lease, a reconcile interval. */
  readonly ticks: readonly number[];
  /** Reconciler runs while the events are being handled (each on its timer). */
  readonly reconciles: number;
  /** The fate of the n-th store write served (the rest are applied). */
  readonly storeFates: readonly WriteFate[];
  /** The fate of the n-th carrier call (the rest are answered). */
  readonly carrierFates: readonly CarrierFate[];
  /** Actors (deliveries and reconciler runs, counted as they start) that die at an await. */
  readonly crashes: readonly CrashPoint[];
}

const storeFaultArb = fc.constantFrom<WriteFate>('refused-429', 'refused-503', 'lost-408', 'lost-reset');
const carrierFaultArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant<CarrierFate>('answer-lost') },
  { weight: 2, arbitrary: fc.constant<CarrierFate>('unavailable') },
  { weight: 2, arbitrary: fc.constant<CarrierFate>('stored-error') },
  { weight: 1, arbitrary: fc.constant<CarrierFate>('refused') },
  { weight: 2, arbitrary: fc.constant<CarrierFate>('unreachable') },
);

export function shipmentScenarioArb(): fc.Arbitrary<ShipmentScenario> {
  return fc
    .record({
      orders: fc.integer({ min: 1, max: 2 }),
      lockLost: fc.uniqueArray(fc.nat(1), { maxLength: 2 }),
      resubmits: fc.uniqueArray(fc.nat(1), { maxLength: 1 }),
      orderChanges: fc.array(fc.nat(1), { maxLength: 2 }),
      ticks: fc.array(fc.constantFrom(1, shipmentTimes.leaseSeconds + 1, shipmentTimes.reconcileEverySeconds), { maxLength: 3 }),
      reconciles: fc.integer({ min: 0, max: 4 }),
      storeFaults: fc.array(fc.record({ at: fc.nat(16), fate: storeFaultArb }), { maxLength: 3 }),
      carrierFaults: fc.array(fc.record({ at: fc.nat(8), fate: carrierFaultArb }), { maxLength: 4 }),
      crashes: fc.array(fc.record({ delivery: fc.nat(8), atAwait: fc.integer({ min: 1, max: 8 }), afterApplying: fc.boolean() }), { maxLength: 2 }),
    })
    .map(({ orders, lockLost, resubmits, orderChanges, ticks, reconciles, storeFaults, carrierFaults, crashes }) => {
      const within = (i: number) => i < orders;
      const storeFates: WriteFate[] = [];
      for (const { at, fate } of storeFaults) storeFates[at] = fate;
      const carrierFates: CarrierFate[] = [];
      for (const { at, fate } of carrierFaults) carrierFates[at] = fate;
      return {
        orderIds: Array.from({ length: orders }, (_, i) => `o${i + 1}`),
        lockLost: lockLost.filter(within),
        resubmits: resubmits.filter(within),
        orderChanges: orderChanges.filter(within),
        ticks,
        reconciles,
        storeFates: Array.from(storeFates, (f) => f ?? 'applied'),
        carrierFates: Array.from(carrierFates, (f) => f ?? 'answered'),
        crashes,
      };
    });
}
