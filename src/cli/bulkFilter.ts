import { failureGroupId } from './failureGroups.js';
import type { FailureItem } from './failureGroups.js';

/**
 * What every bulk command narrows its members by, besides its own filters: a failure group as
 * `groups` prints it, a time window on the instant `groups` shows (dead-lettered or enqueued,
 * rejected or parked, created), and a cap. Pure: the commands map what they read to FailureItems.
 */
export interface BulkFilter {
  readonly groupId?: string;
  readonly sinceMs?: number;
  readonly untilMs?: number;
  /** At most this many members per run, oldest first. */
  readonly max: number;
}

/** No narrowing and no cap: for the commands' own callers (groups retry narrows before it calls). */
export const noBulkFilter: BulkFilter = { max: Number.MAX_SAFE_INTEGER };

export function passesBulkFilter(item: Pick<FailureItem, 'entity' | 'reason' | 'messageType' | 'at'>, filter: BulkFilter): boolean {
  if (filter.groupId !== undefined && failureGroupId(item) !== filter.groupId) return false;
  const at = Date.parse(item.at);
  if (filter.sinceMs !== undefined && !(at >= filter.sinceMs)) return false;
  if (filter.untilMs !== undefined && !(at <= filter.untilMs)) return false;
  return true;
}

/** The members that pass, oldest first, at most `max`. */
export function takeBulk<T>(members: readonly T[], itemOf: (member: T) => FailureItem, filter: BulkFilter): T[] {
  return members
    .map((member) => ({ member, item: itemOf(member) }))
    .filter(({ item }) => passesBulkFilter(item, filter))
    .sort((a, b) => (a.item.at < b.item.at ? -1 : a.item.at > b.item.at ? 1 : 0))
    .slice(0, filter.max)
    .map(({ member }) => member);
}
