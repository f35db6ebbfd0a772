import type { Settings } from '../config.js';
import { resolveRuntime } from '../consumer/index.js';
import type { RuntimeOverrides } from '../consumer/index.js';
import { ParkedItemMetrics, reportParkedItems } from '../telemetry/index.js';
import type { LogSink } from '../telemetry/index.js';
import { sweepParkedItems } from './sweepParkedItems.js';
import type { SweepResult } from './sweepParkedItems.js';

export interface ParkedItemSweeper {
  sweep(log: LogSink): Promise<SweepResult>;
}

/** The sweeper's composition root: the orders store, the horizon from settings, one log line per run. */
export function createParkedItemSweeper(settings: Settings, overrides: RuntimeOverrides = {}): ParkedItemSweeper {
  const { meter, ...runtime } = resolveRuntime(settings, overrides);
  const ctx = { ...runtime, orderEventsDestination: settings.outbox.orderEventsTopicName, statusVersionMaxStep: settings.statusVersionMaxStep };
  const parkedMetrics = new ParkedItemMetrics(meter);
  const options = {
    horizonSeconds: settings.parking.horizonSeconds,
    minAgeSeconds: settings.parking.sweepMinAgeSeconds,
    maxItemsPerRun: settings.parking.sweepMaxItemsPerRun,
  };
  // Where the last run's page ended; kept for the worker's life (a restart begins again at the oldest).
  let after: string | undefined;
  return {
    async sweep(log) {
      // Stryker disable next-line ConditionalExpression: an absent `after` and an undefined one are read alike (`options.after === undefined`). The EqualityOperator mutant stays checked.
      const result = await sweepParkedItems(ctx, { ...options, ...(after === undefined ? {} : { after }) });
      after = result.nextAfter;
      reportParkedItems(log, parkedMetrics, 'sweep', result.applied, result.rejected);
      parkedMetrics.recordOldestAge(result.oldestParkedAgeSeconds);
      log.info(
        JSON.stringify({
          event: 'parked-sweep',
          examined: result.examined,
          maxItemsPerRun: options.maxItemsPerRun,
          applied: result.applied,
          rejected: result.rejected.length,
          oldestParkedAgeSeconds: result.oldestParkedAgeSeconds,
          horizonSeconds: options.horizonSeconds,
        }),
      );
      return result;
    },
  };
}
