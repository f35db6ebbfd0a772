import { metrics } from '@opentelemetry/api';
import type { Meter } from '@opentelemetry/api';
import type { Settings } from '../config.js';
import type { DocumentStore } from '../idempotency/index.js';
import { meterName } from '../telemetry/index.js';
import type { ConsumerRuntime } from './consumerRuntime.js';
import { ordersStore } from './ordersStore.js';

/** What a test (or a local host) may replace; everything else comes from settings. */
export interface RuntimeOverrides {
  readonly meter?: Meter;
  readonly now?: () => Date;
  /** Every pause the flows take (default: a real timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The pauses' jitter (default: Math.random). */
  readonly random?: () => number;
  readonly store?: DocumentStore;
}

/** The runtime and the meter every composition root builds on. */
export interface ResolvedRuntime extends ConsumerRuntime {
  readonly meter: Meter;
}

/**
 * The one place the composition roots (consumers, sweeper, reconciler, publisher, intake) turn
 * settings and overrides into a runtime: the orders container's store (one client per process),
 * the clock, the pauses and the shared limits. `consumerName` is not set here: a root that scopes
 * its records by consumer says so itself.
 */
export function resolveRuntime(settings: Settings, overrides: RuntimeOverrides = {}): ResolvedRuntime {
  return {
    store: overrides.store ?? ordersStore(settings),
    now: overrides.now ?? (() => new Date()),
    // Stryker disable next-line ConditionalExpression: an absent sleep and an undefined one are read alike (`sleep ?? realSleep`). The EqualityOperator mutant stays checked.
    ...(overrides.sleep === undefined ? {} : { sleep: overrides.sleep }),
    // Stryker disable next-line ConditionalExpression: an absent random and an undefined one are read alike (`random ?? Math.random`). The EqualityOperator mutant stays checked.
    ...(overrides.random === undefined ? {} : { random: overrides.random }),
    meter: overrides.meter ?? metrics.getMeter(meterName),
    markerTtlSeconds: settings.markerTtlSeconds,
    maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
  };
}
