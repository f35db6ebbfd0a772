import { setTimeout as sleep } from 'node:timers/promises';
import type { DocumentStore } from '../idempotency/index.js';

/** What every message flow needs; built once per process by the composition root. */
export interface FlowContext {
  readonly store: DocumentStore;
  readonly now: () => Date;
  /** Inbox marker lifetime, validated against the queue's redelivery horizon at start-up. */
  readonly markerTtlSeconds: number;
  /** Rounds of read-modify-replace before a lost race is handed back to Service Bus as a retry. */
  readonly maxConcurrencyAttempts: number;
  /** Where the OrderAccepted events that orders write to their outbox are published. */
  readonly orderEventsDestination: string;
}

/** A short random pause after a lost race, so that writers contending for one order spread out. */
// Stryker disable all: a random pause of a few milliseconds; that contending writers spread out is all it promises, and no assertion can pin a random length
export async function pauseAfterLostRace(attempt: number): Promise<void> {
  await sleep(Math.floor(Math.random() * 4 * attempt));
}
// Stryker restore all
