import { setTimeout as sleep } from 'node:timers/promises';
import type { DocumentStore } from '../idempotency/index.js';

/** What every message flow needs; built once per process by the composition root. */
export interface FlowContext {
  readonly store: DocumentStore;
  readonly now: () => Date;
  /** Scopes what a consumer claims (payment claims) when consumers share a container. */
  readonly consumerName?: string;
  /** Inbox marker lifetime, validated against the queue's redelivery horizon at start-up. */
  readonly markerTtlSeconds: number;
  /** Rounds of read-modify-replace before a lost race is handed back to Service Bus as a retry. */
  readonly maxConcurrencyAttempts: number;
  /** Where the OrderAccepted events that orders write to their outbox are published. */
  readonly orderEventsDestination: string;
  /** How far one status change may move an order's version (default `defaultStatusVersionMaxStep`). */
  readonly statusVersionMaxStep?: number;
  /** Every pause a flow takes goes through this (default: a real timer), so a test or a scheduler decides when it ends. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The source of the pauses' jitter (default: Math.random). */
  readonly random?: () => number;
}

const realSleep = (ms: number): Promise<void> => sleep(ms).then(() => undefined);

/** A short random pause after a lost race (up to 4 ms per attempt), so that writers contending for one order spread out. */
export async function pauseAfterLostRace(attempt: number, ctx: Pick<FlowContext, 'sleep' | 'random'>): Promise<void> {
  const random = ctx.random ?? Math.random;
  await (ctx.sleep ?? realSleep)(Math.floor(random() * 4 * attempt));
}
