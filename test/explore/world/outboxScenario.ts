import fc from 'fast-check';
import type { WriteFate } from './fates.js';
import type { ReadFate } from './readFates.js';

/**
 * What the broker does with one send call (one destination's messages, in the order served):
 * - `sent`: accepted, each message reaches the topic unless duplicate detection drops it;
 * - `transient`: refused for now before anything was accepted (ServiceBusy, a timeout before the send);
 * - `lost`: every message accepted, then the answer lost (the sender sees a timeout);
 * - `partial`: the first message accepted, then the send fails for now (a batch split, its second send failing);
 * - `refused`: refused for good (MessagingEntityDisabled): each message's outcome says so.
 */
export type SendFate = 'sent' | 'transient' | 'lost' | 'partial' | 'refused';

/** An actor (a change-feed delivery or a sweeper run, counted as they start) dying at its n-th await. */
export interface OutboxCrash {
  readonly actor: number;
  readonly atAwait: number;
  /** When that await is a write or a send: applied before the worker died. */
  readonly afterApplying: boolean;
}

/**
 * The outbox world's givens: the orders whose OrderAccepted entries wait in the container, how the
 * change feed hands them out (batches; a batch whose lease was lost, so two instances hold it), the
 * trigger's retries, the sweeper's timer, the clock, and the fates of store writes and sends.
 */
export interface OutboxScenario {
  readonly orderIds: readonly string[];
  /** Change-feed batches: order indexes, each order in exactly one batch. */
  readonly batches: readonly (readonly number[])[];
  /** Batches delivered to a second instance while the first may still run (its lease was lost). */
  readonly lostLeases: readonly number[];
  /** Retries of a batch whose delivery threw (the trigger's retry policy), then the feed moves on. */
  readonly batchRetries: number;
  readonly sweeps: number;
  /** Clock moves in seconds: within the feed's latency, or past the sweeper's minimum age. */
  readonly ticks: readonly number[];
  readonly maxItemsPerRun: number;
  readonly storeFates: readonly WriteFate[];
  /** The fate of the n-th read or query served (the rest are answered). */
  readonly readFates: readonly ReadFate[];
  readonly sendFates: readonly SendFate[];
  readonly crashes: readonly OutboxCrash[];
}

export const outboxSweepMinAgeSeconds = 60;

const storeFaultArb = fc.constantFrom<WriteFate>('refused-429', 'refused-503', 'refused-408', 'lost-408', 'lost-reset');
const sendFaultArb = fc.constantFrom<SendFate>('transient', 'lost', 'partial', 'refused');

export function outboxScenarioArb(): fc.Arbitrary<OutboxScenario> {
  return fc
    .record({
      orders: fc.integer({ min: 1, max: 4 }),
      // Where each order's batch starts: a cut after order i when cuts[i] is true.
      cuts: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      lostLeases: fc.array(fc.nat(3), { maxLength: 2 }),
      batchRetries: fc.integer({ min: 0, max: 2 }),
      sweeps: fc.integer({ min: 0, max: 2 }),
      ticks: fc.array(fc.constantFrom(1, outboxSweepMinAgeSeconds + 1), { maxLength: 2 }),
      maxItemsPerRun: fc.integer({ min: 1, max: 3 }),
      storeFaults: fc.array(fc.record({ at: fc.nat(12), fate: storeFaultArb }), { maxLength: 3 }),
      readFaults: fc.array(fc.record({ at: fc.nat(10), fate: fc.constantFrom<ReadFate>('refused-429', 'refused-503', 'refused-408') }), { maxLength: 2 }),
      sendFaults: fc.array(fc.record({ at: fc.nat(8), fate: sendFaultArb }), { maxLength: 3 }),
      crashes: fc.array(fc.record({ actor: fc.nat(6), atAwait: fc.integer({ min: 1, max: 6 }), afterApplying: fc.boolean() }), { maxLength: 2 }),
    })
    .map(({ orders, cuts, lostLeases, batchRetries, sweeps, ticks, maxItemsPerRun, storeFaults, readFaults, sendFaults, crashes }) => {
      const orderIds = Array.from({ length: orders }, (_, i) => `o${i + 1}`);
      const batches: number[][] = [[0]];
      for (let i = 1; i < orders; i += 1) {
        if (cuts[i - 1]) batches.push([i]);
        else batches[batches.length - 1]!.push(i);
      }
      const storeFates: WriteFate[] = [];
      for (const { at, fate } of storeFaults) storeFates[at] = fate;
      const readFates: ReadFate[] = [];
      for (const { at, fate } of readFaults) readFates[at] = fate;
      const sendFates: SendFate[] = [];
      for (const { at, fate } of sendFaults) sendFates[at] = fate;
      return {
        orderIds,
        batches,
        lostLeases: lostLeases.filter((b) => b < batches.length),
        batchRetries,
        sweeps,
        ticks,
        maxItemsPerRun,
        storeFates: Array.from(storeFates, (f) => f ?? 'applied'),
        readFates: Array.from(readFates, (f) => f ?? 'answered'),
        sendFates: Array.from(sendFates, (f) => f ?? 'sent'),
        crashes,
      };
    });
}
