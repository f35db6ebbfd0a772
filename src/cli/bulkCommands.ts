import { Option } from 'commander';
import type { Command } from 'commander';
import type { BulkFilter } from './bulkFilter.js';
import { parseMax } from './failureGroups.js';
import { scanMaxOption } from './scanBound.js';
import { parseInstant } from './timeWindow.js';

/**
 * The commands that can act on many messages, items or entries at once. A bulk run of one of them
 * (`--all`, a filter, or more than one named target; `groups retry` always) only shows its plan
 * unless `--yes` is given: changing many things is never what a mistyped filter should do. A test
 * walks the command tree and proves that every command taking `--all` or several targets is here.
 */
export const bulkCommandPaths: ReadonlySet<string> = new Set(['resubmit', 'purge', 'parked resubmit', 'parked discard', 'outbox requeue', 'groups retry']);

/** The options that pick members without naming them. */
export const bulkSelectors = ['reason', 'olderThan', 'newerThan', 'bodyContains', 'order', 'group', 'since', 'until'] as const;

export const defaultMax = 100;

export interface BulkOptions {
  readonly all?: boolean;
  readonly group?: string;
  readonly since?: string;
  readonly until?: string;
  readonly max?: number;
  readonly scanMax?: number;
  readonly yes?: boolean;
  readonly dryRun?: boolean;
}

/**
 * `--group`, `--since`, `--until`, `--max`, `--scan-max`, `--yes` and `--dry-run` (kept for the scripts that pass
 * it; a bulk run is a dry run anyway). `groups retry` names its group as its argument instead.
 */
export function withBulkOptions(command: Command, what: string, options: { readonly group?: boolean } = {}): Command {
  const has = (flag: string) => command.options.some((o) => o.long === flag);
  if (options.group !== false)
    command.option('--group <id>', `only ${what} of this failure group (g- and 10 hex digits, as \`groups\` prints it)`, parseGroupId);
  if (!has('--since')) command.option('--since <time>', `only ${what} that failed from this time (2026-12-03T08:00Z) or this long ago (2h, 7d)`);
  if (!has('--until')) command.option('--until <time>', `only ${what} that failed up to this time or this long ago`);
  if (!has('--max')) command.addOption(new Option('--max <n>', `at most this many ${what}, oldest first (1 to 10000)`).default(defaultMax).argParser(parseMax));
  if (!has('--scan-max'))
    command.addOption(
      scanMaxOption(`look at most at this many ${what} (dead letters in sequence order, stored ones oldest first): further ones are not reached`),
    );
  if (!has('--yes')) command.option('--yes', `act: without it, a bulk run (--all, a filter, more than one target) only shows the plan`);
  if (!has('--dry-run')) command.option('--dry-run', 'show the plan and change nothing (the default for a bulk run)');
  return command;
}

export function parseGroupId(text: string): string {
  if (!/^g-[0-9a-f]{10}$/.test(text.trim())) throw new Error(`--group "${text}" is not a failure group id such as g-0123456789 (run \`groups\` for the ids)`);
  return text.trim();
}

/** A run that acts on what a filter or `--all` picks, or on more than one named target. */
export function isBulkRun(path: string, targets: readonly string[], options: object): boolean {
  if (!bulkCommandPaths.has(path)) return false;
  if (path === 'groups retry') return true;
  const given = options as Readonly<Record<string, unknown>>;
  return given.all === true || targets.length > 1 || bulkSelectors.some((name) => given[name] !== undefined);
}

/** True when the run changes nothing: `--dry-run`, or a bulk run without `--yes`. */
export function plansOnly(path: string, targets: readonly string[], options: BulkOptions): boolean {
  return options.dryRun === true || (isBulkRun(path, targets, options) && options.yes !== true);
}

/**
 * Turns `--since 2h` into the instant it meant when the run started, before the run is recorded, so
 * the operator-action record and the command act on the same window.
 */
export function resolveBulkWindow(action: Command, nowMs: number): void {
  const options = action.opts<BulkOptions>();
  const at = (name: 'since' | 'until') => {
    const text = options[name];
    if (text !== undefined) action.setOptionValue(name, new Date(parseInstant(text, nowMs)).toISOString());
  };
  at('since');
  at('until');
  const { since, until } = action.opts<BulkOptions>();
  if (since !== undefined && until !== undefined && since > until) throw new Error(`--since (${since}) is after --until (${until})`);
}

/** The filter a bulk command's options give. */
export function bulkFilterOf(options: BulkOptions): BulkFilter {
  return {
    groupId: options.group,
    sinceMs: options.since === undefined ? undefined : Date.parse(options.since),
    untilMs: options.until === undefined ? undefined : Date.parse(options.until),
    max: options.max ?? defaultMax,
  };
}

/** The closing words of a plan: what it would do, and how to do it. */
export const planPrefix = 'dry run (--yes to act): ';

/** The warning's words for a bulk run stopped at `--scan-max`. */
export const bulkStopWords = ['further ones were not reached (not acted on, not in the plan)', 'or act on these and run again'] as const;
