import { setTimeout } from 'node:timers/promises';
import type { DocumentStore } from '../idempotency/index.js';

/**
 * What every flow of every consumer runs on, resolved once per process (resolveRuntime):
 * the store, the clock and the pauses, and the limits that hold for every message. A domain adds
 * only its own settings to it (orders: where OrderAccepted events go; shipments: the carrier).
 */
export interface ConsumerRuntime {
  readonly store: DocumentStore;
  readonly now: () => Date;
  /** Every pause a flow takes goes through this (default: a real timer), so a test or a scheduler decides when it ends. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The source of the pauses' jitter (default: Math.random). */
  readonly random?: () => number;
  /** Scopes keys, claims and rejection records when consumers share a container. */
  readonly consumerName?: string;
  /** Inbox marker and rejection record lifetime, validated against the queue's redelivery horizon at start-up. */
  readonly markerTtlSeconds: number;
  /** Rounds of read-modify-replace before a lost race is handed back to Service Bus as a retry. */
  readonly maxConcurrencyAttempts: number;
}

/** The pause when none is injected: a real timer. */
export function realSleep(ms: number): Promise<void> {
  return setTimeout(ms);
}
