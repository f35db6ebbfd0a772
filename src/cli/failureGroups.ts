import { createHash } from 'node:crypto';
import type { TimeWindow } from './timeWindow.js';

/**
 * Failures grouped as ServicePulse groups them: what failed where, for the same reason, with the same
 * message type. Pure: the commands gather the items (dead-letter queues, parked items, failed outbox
 * entries, escalated shipments) and act on a group's members.
 */
export type FailureSource = 'dead-letter' | 'parked' | 'outbox' | 'shipment';

export interface FailureItem {
  readonly source: FailureSource;
  /** Where it waits: `orders/$deadletterqueue`, `order-events/fulfilment/$deadletterqueue`, `parked`, `outbox`, `shipments`. */
  readonly entity: string;
  readonly reason: string;
  readonly messageType: string;
  /** When it failed (dead-lettered or enqueued, parked or rejected, created, escalated), ISO 8601. */
  readonly at: string;
  /** How the command that retries it names it: a sequence number, `<orderId>/<id>`, an order id. */
  readonly target: string;
}

export interface FailureGroup {
  readonly id: string;
  readonly source: FailureSource;
  readonly entity: string;
  readonly reason: string;
  readonly messageType: string;
  readonly count: number;
  readonly oldest: string;
  readonly newest: string;
}

/** A short id that stays the same from run to run for the same (entity, reason, message type); JSON keeps the three apart whatever they hold. */
export function failureGroupId(item: Pick<FailureItem, 'entity' | 'reason' | 'messageType'>): string {
  return `g-${createHash('sha256')
    .update(JSON.stringify([item.entity, item.reason, item.messageType]))
    .digest('hex')
    .slice(0, 10)}`;
}

/** The groups of the items inside the window, largest first (then oldest first). */
export function groupFailures(items: readonly FailureItem[], window: TimeWindow): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const item of inWindow(items, window)) {
    const id = failureGroupId(item);
    const seen = groups.get(id);
    groups.set(
      id,
      seen
        ? { ...seen, count: seen.count + 1, oldest: item.at < seen.oldest ? item.at : seen.oldest, newest: item.at > seen.newest ? item.at : seen.newest }
        : { id, source: item.source, entity: item.entity, reason: item.reason, messageType: item.messageType, count: 1, oldest: item.at, newest: item.at },
    );
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.oldest < b.oldest ? -1 : a.oldest > b.oldest ? 1 : 0));
}

/** A group's members inside the window, oldest first, at most `max`. */
export function groupMembers(items: readonly FailureItem[], groupId: string, window: TimeWindow, max: number): FailureItem[] {
  return inWindow(items, window)
    .filter((item) => failureGroupId(item) === groupId)
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    .slice(0, max);
}

/** `--max`: a whole number from 1 to 10,000, so one run stays bounded. */
export function parseMax(text: string): number {
  const max = /^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(max >= 1 && max <= 10_000)) throw new Error(`--max "${text}" is not a whole number from 1 to 10000`);
  return max;
}

function inWindow(items: readonly FailureItem[], window: TimeWindow): FailureItem[] {
  return items.filter((item) => {
    const at = Date.parse(item.at);
    return at >= window.sinceMs && at <= window.untilMs;
  });
}
