import fc from 'fast-check';
import type { WriteFate } from './fates.js';
import type { ReadFate } from './readFates.js';

/** The order bodies a client may send: two for one order id (another body), one for another order. */
export const intakeBodies = {
  A: { orderId: 'o1', customerId: 'c1', currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 10 }], placedAt: '2026-11-30T08:00:00Z' },
  'A*': { orderId: 'o1', customerId: 'c2', currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: 10 }], placedAt: '2026-11-30T08:00:00Z' },
  B: { orderId: 'o2', customerId: 'c1', currency: 'EUR', lines: [{ sku: 'SKU-2', quantity: 1, unitPrice: 5 }], placedAt: '2026-11-30T08:00:00Z' },
} as const;
export type BodyName = keyof typeof intakeBodies;

/** One client's request: the Idempotency-Key and the body it sends on every attempt. */
export interface ClientPlan {
  readonly client: string;
  readonly key: 'k1' | 'k2';
  readonly body: BodyName;
}

/** An invocation (an attempt, counted as they start) abandoned at its n-th store call: the client's connection resets. */
export interface IntakeCrash {
  readonly invocation: number;
  readonly atAwait: number;
  readonly afterApplying: boolean;
}

/**
 * The intake world's givens: clients sending the same key concurrently (with the same body, or
 * another; another key for the same order), answers lost on the way back (the client retries),
 * invocations that die, the clock's moves, and the fates of store writes.
 */
export interface IntakeScenario {
  readonly clients: readonly ClientPlan[];
  /** Invocations (counted as they start) whose answer the client never hears. */
  readonly answersLost: readonly number[];
  readonly ticks: readonly number[];
  readonly fates: readonly WriteFate[];
  /** The fate of the n-th read or query served (the rest are answered). */
  readonly readFates: readonly ReadFate[];
  readonly crashes: readonly IntakeCrash[];
}

export const intakeLeaseSeconds = 10;
/**
 * The key records' retention when the world lets them run out (`intakeScenarioArb({ keysExpire: true })`):
 * the least start-up allows over a client retry horizon of 20 s, so a tick of it ends every record.
 */
export const intakeExpiringKeyRetentionSeconds = 30;
export const intakeExpiringKeyRetryHorizonSeconds = intakeExpiringKeyRetentionSeconds - intakeLeaseSeconds;

const faultArb = fc.constantFrom<WriteFate>('refused-429', 'refused-503', 'refused-408', 'lost-408', 'lost-reset');

/**
 * With `keysExpire`, a tick may also be a whole key retention: records run out while requests under
 * their keys are handled or retried, and the key is free for another order. Without it the ticks
 * are those the replayed counterexamples' paths were drawn from.
 */
export function intakeScenarioArb(options: { readonly keysExpire?: boolean } = {}): fc.Arbitrary<IntakeScenario> {
  const tick = options.keysExpire ? fc.constantFrom(1, intakeLeaseSeconds + 1, intakeExpiringKeyRetentionSeconds) : fc.constantFrom(1, intakeLeaseSeconds + 1);
  return fc
    .record({
      // Mostly the same key: the concurrent copies and conflicts are what the intake is for.
      clients: fc.array(
        fc.record({
          key: fc.oneof({ weight: 3, arbitrary: fc.constant('k1' as const) }, { weight: 1, arbitrary: fc.constant('k2' as const) }),
          body: fc.constantFrom<BodyName>('A', 'A', 'A*', 'B'),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      answersLost: fc.array(fc.nat(8), { maxLength: 2 }),
      ticks: fc.array(tick, { maxLength: 2 }),
      faults: fc.array(fc.record({ at: fc.nat(10), fate: faultArb }), { maxLength: 3 }),
      readFaults: fc.array(fc.record({ at: fc.nat(16), fate: fc.constantFrom<ReadFate>('refused-429', 'refused-503', 'refused-408') }), { maxLength: 2 }),
      crashes: fc.array(fc.record({ invocation: fc.nat(6), atAwait: fc.integer({ min: 1, max: 7 }), afterApplying: fc.boolean() }), { maxLength: 2 }),
    })
    .map(({ clients, answersLost, ticks, faults, readFaults, crashes }) => {
      const fates: WriteFate[] = [];
      for (const { at, fate } of faults) fates[at] = fate;
      const readFates: ReadFate[] = [];
      for (const { at, fate } of readFaults) readFates[at] = fate;
      return {
        clients: clients.map((c, i) => ({ client: `client${i + 1}`, ...c })),
        answersLost,
        ticks,
        fates: Array.from(fates, (f) => f ?? 'applied'),
        readFates: Array.from(readFates, (f) => f ?? 'answered'),
        crashes,
      };
    });
}
