import { Cron } from 'croner';
import type { RegisteredFunction } from './functionsCore.js';
import { invokeRegisteredFunction } from './hostInvocation.js';
import type { InvocationResult } from './hostInvocation.js';
import { resolveBindingExpression } from './hostSettings.js';
import type { ListenerLease } from './listenerLease.js';

/**
 * A timer trigger's schedule as the Functions host reads it: an NCRONTAB expression of six fields
 * (`{second} {minute} {hour} {day} {month} {day-of-week}`), in UTC (WEBSITE_TIME_ZONE unset).
 * Five-field cron, which the host refuses, is refused here with the same advice.
 */
export function parseNcrontab(expression: string, functionName: string): Cron {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 6) {
    throw new Error(
      `${functionName}: schedule ${JSON.stringify(expression)} has ${fields.length} fields; NCRONTAB needs six ({second} {minute} {hour} {day} {month} {day-of-week}), e.g. "0 */5 * * * *"`,
    );
  }
  try {
    return new Cron(fields.join(' '), { paused: true, timezone: 'UTC' });
  } catch (error) {
    throw new Error(`${functionName}: schedule ${JSON.stringify(expression)} is not a valid NCRONTAB expression (${(error as Error).message})`);
  }
}

export interface TimerListenerOptions {
  readonly settings: Readonly<Record<string, string>>;
  /** One listener per function across every host sharing it: only the holder runs the timer. */
  readonly lease: ListenerLease;
  readonly onInvocation?: (fn: RegisteredFunction, result: InvocationResult) => void;
  readonly now?: () => Date;
}

export interface TimerListener {
  readonly functionName: string;
  readonly schedule: string;
  /** Resolves once the invocation that is running (if any) has finished. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Runs one timer-triggered function as the host does: `runOnStartup` fires once at start, then each
 * occurrence of the schedule; invocations never overlap (the next occurrence is computed once the
 * last one has finished, and one that was missed meanwhile runs at once with `isPastDue`); only the
 * host holding the function's listener lease runs it. A failed invocation is logged by the caller
 * and the schedule goes on.
 */
export function startTimerListener(fn: RegisteredFunction, trigger: Record<string, unknown>, options: TimerListenerOptions): TimerListener {
  const schedule = resolveBindingExpression(String(trigger.schedule ?? ''), options.settings);
  const cron = parseNcrontab(schedule, fn.metadata.name);
  const now = options.now ?? (() => new Date());
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let last: Date | undefined;

  const invoke = (isPastDue: boolean) => {
    running = (async () => {
      if (!(await options.lease.holds())) return;
      const firedAt = now();
      const next = cron.nextRun(firedAt) ?? firedAt;
      const input = {
        Schedule: { AdjustForDST: true },
        ScheduleStatus: { Last: (last ?? firedAt).toISOString(), Next: next.toISOString(), LastUpdated: firedAt.toISOString() },
        IsPastDue: isPastDue,
      };
      const result = await invokeRegisteredFunction(
        fn,
        { json: JSON.stringify(input) },
        { sys: { json: JSON.stringify({ MethodName: fn.metadata.name, UtcNow: firedAt, RandGuid: crypto.randomUUID() }) } },
      );
      last = firedAt;
      options.onInvocation?.(fn, result);
    })();
    return running;
  };

  const scheduleNext = (after: Date) => {
    if (closed) return;
    const next = cron.nextRun(after);
    if (!next) return;
    timer = setTimeout(
      () => {
        void invoke(false).then(() => {
          const finished = now();
          // An occurrence that fell inside the run is not skipped: it runs now, as past due.
          const missed = cron.nextRun(next);
          if (missed && missed < finished && !closed) void invoke(true).then(() => scheduleNext(now()));
          else scheduleNext(finished);
        });
      },
      Math.max(0, next.getTime() - now().getTime()),
    );
  };

  if (trigger.runOnStartup === true) void invoke(false).then(() => scheduleNext(now()));
  else scheduleNext(now());

  return {
    functionName: fn.metadata.name,
    schedule,
    idle: () => running,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
      await options.lease.release();
    },
  };
}
