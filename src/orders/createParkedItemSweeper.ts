import { metrics } from '@opentelemetry/api';
import type { Meter } from '@opentelemetry/api';
import type { Settings } from '../config.js';
import type { DocumentStore } from '../idempotency/index.js';
import { ParkedItemMetrics, meterName, reportParkedItems } from '../telemetry/index.js';
import type { LogSink } from '../telemetry/index.js';
import { ordersStore } from './ordersStore.js';
import { sweepParkedItems } from './sweepParkedItems.js';
import type { SweepResult } from './sweepParkedItems.js';

export interface SweeperOverrides {
  readonly meter?: Meter;
  readonly now?: () => Date;
  /** Every pause the flows take (default: a real timer). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly store?: DocumentStore;
}

export interface ParkedItemSweeper {
  sweep(log: LogSink): Promise<SweepResult>;
}

/** The sweeper's composition root: the orders store, the horizon from settings, one log line per run. */
export function createParkedItemSweeper(settings: Settings, overrides: SweeperOverrides = {}): ParkedItemSweeper {
  const ctx = {
    store: overrides.store ?? ordersStore(settings),
    now: overrides.now ?? (() => new Date()),
    // Stryker disable next-line ConditionalExpression: an absent sleep and an undefined one are read alike (`ctx.sleep ?? realSleep`). The EqualityOperator mutant stays checked.
    ...(overrides.sleep === undefined ? {} : { sleep: overrides.sleep }),
    markerTtlSeconds: settings.markerTtlSeconds,
    orderEventsDestination: settings.outbox.orderEventsTopicName,
    maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
    statusVersionMaxStep: settings.statusVersionMaxStep,
  };
  const parkedMetrics = new ParkedItemMetrics(overrides.meter ?? metrics.getMeter(meterName));
  const options = { horizonSeconds: settings.parking.horizonSeconds, minAgeSeconds: settings.parking.sweepMinAgeSeconds, maxItemsPerRun: settings.parking.sweepMaxItemsPerRun };
  // Where the last run's page ended; kept for the worker's life (a restart begins again at the oldest).
  let after: string | undefined;
  return {
    async sweep(log) {
      // Stryker disable next-line ConditionalExpression: an absent `after` and an undefined one are read alike (`options.after === undefined`). The EqualityOperator mutant stays checked.
      const result = await sweepParkedItems(ctx, { ...options, ...(after === undefined ? {} : { after }) });
      after = result.nextAfter;
      reportParkedItems(log, parkedMetrics, 'sweep', result.applied, result.rejected);
      parkedMetrics.recordOldestAge(result.oldestParkedAgeSeconds);
      log.info(JSON.stringify({ event: 'parked-sweep', examined: result.examined, maxItemsPerRun: options.maxItemsPerRun, applied: result.applied, rejected: result.rejected.length, oldestParkedAgeSeconds: result.oldestParkedAgeSeconds, horizonSeconds: options.horizonSeconds }));
      return result;
    },
  };
}
