import { Option } from 'commander';
import type { DocumentQuery, DocumentStore, StoredDocument, VersionedDocument } from '../idempotency/index.js';
import { oneLine } from './terminalText.js';

/**
 * How far one run reads: a hostile sender can flood a dead-letter queue with millions of messages,
 * and parked items and outbox entries can be many too, so every command that walks them stops at a
 * bound and says where (a warning on stderr, `truncated` in --json, exit code 1), in the words
 * `groups` uses.
 */
export const defaultScanMax = 100_000;

/** `--scan-max`: how many messages of one entity (or stored documents of one kind) a run reads at most, 1 to 1,000,000. */
export function parseScanMax(text: string): number {
  const max = /^\d{1,7}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(max >= 1 && max <= 1_000_000)) throw new Error(`--scan-max "${text}" is not a whole number from 1 to 1000000`);
  return max;
}

export function scanMaxOption(help: string): Option {
  return new Option('--scan-max <n>', `${help}, 1 to 1000000`).default(defaultScanMax, '100000 messages').argParser(parseScanMax);
}

/** Where a bounded read stopped: `orders/$deadletterqueue` after 1000 ` messages`, `in sequence order`; raise `--scan-max`. */
export interface ScanStop {
  readonly what: string;
  readonly after: number;
  readonly unit: string;
  readonly order: string;
  /** The option that moves the bound. */
  readonly option: '--scan-max' | '--max';
}

/** A read's bound and where it reports a stop. */
export interface ScanBound {
  readonly scanMax: number;
  readonly stopped: (stop: ScanStop) => void;
}

/** The default for callers that name their targets (they stop when they have found them): a stop is still reported to nobody but the bound holds. */
export const quietScanBound: ScanBound = { scanMax: defaultScanMax, stopped: () => undefined };

/**
 * The stops of one run: each is a line of `truncated` and a warning that says what the output leaves
 * out (`consequence`) and what to do next (`next`, after "raise <option>").
 */
export function scanStops(
  stderr: (text: string) => void,
  consequence: string,
  next: string,
): { readonly truncated: string[]; readonly stopped: (s: ScanStop) => void } {
  const truncated: string[] = [];
  const stopped = (s: ScanStop) => {
    truncated.push(`${s.what}: stopped after ${s.after}${s.unit}`);
    stderr(`warning: ${oneLine(s.what)}: stopped after ${s.after}${s.unit} (${s.order}): ${consequence}; raise ${s.option}, ${next}`);
  };
  return { truncated, stopped };
}

/** A stop at `scanMax` messages of a dead-letter queue, read in sequence order. */
export const deadLetterStop = (entityPath: string, after: number, unit: ' messages' | ' rows' = ' messages'): ScanStop => ({
  what: `${entityPath}/$deadletterqueue`,
  after,
  unit,
  order: 'in sequence order',
  option: unit === ' rows' ? '--max' : '--scan-max',
});

/** The first `scanMax` documents a query matches (the oldest, by its `orderBy`), and a stop named `what` when there were more. */
export async function findBounded<D extends StoredDocument>(
  store: DocumentStore,
  what: string,
  query: DocumentQuery,
  bound: ScanBound,
): Promise<VersionedDocument<D>[]> {
  const found = await store.find<D>({ ...query, limit: bound.scanMax + 1 });
  if (found.length > bound.scanMax) bound.stopped({ what, after: bound.scanMax, unit: '', order: 'oldest first', option: '--scan-max' });
  return found.slice(0, bound.scanMax);
}
