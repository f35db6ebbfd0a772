import { Option } from 'commander';
import { parseMax } from './failureGroups.js';

/**
 * `list`, `parked list`, `outbox list`: at most `--max` rows (1 to 10000) are kept and printed, and
 * at most `--scan-max` messages (or stored items of each state) are read to find them; a list that
 * stops at either says so in the words of scanBound.ts.
 */
export const defaultListMax = 1000;

export function listMaxOption(what: string): Option {
  return new Option('--max <n>', `at most this many ${what} (1 to 10000)`).default(defaultListMax, '1000 rows').argParser(parseMax);
}

/** The warning's words for a list stopped at a bound. */
export const listStopWords = ['further ones are not listed', 'or narrow with filters'] as const;
