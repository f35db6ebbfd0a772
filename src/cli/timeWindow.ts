import { parseDuration } from './duration.js';

/** `--since`/`--until`: an instant, as an ISO 8601 time (`2026-12-03T08:00Z`, `2026-12-03`) or a duration ago (`2h`, `7d`). */
export function parseInstant(text: string, nowMs: number): number {
  const trimmed = text.trim();
  if (/^\d+[smhd]$/.test(trimmed)) return nowMs - parseDuration(trimmed);
  const at = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(at)) throw new Error(`"${text}" is not a time such as 2026-12-03T08:00Z, or a duration ago such as 2h or 7d`);
  return at;
}

export interface TimeWindow {
  readonly sinceMs: number;
  readonly untilMs: number;
}

/** The window from the options; `--since` defaults to `defaultSpanMs` ago, `--until` to now. */
export function timeWindowOf(options: { readonly since?: string; readonly until?: string }, nowMs: number, defaultSpanMs: number): TimeWindow {
  const sinceMs = options.since === undefined ? nowMs - defaultSpanMs : parseInstant(options.since, nowMs);
  const untilMs = options.until === undefined ? nowMs : parseInstant(options.until, nowMs);
  if (sinceMs > untilMs) throw new Error(`--since (${new Date(sinceMs).toISOString()}) is after --until (${new Date(untilMs).toISOString()})`);
  return { sinceMs, untilMs };
}
