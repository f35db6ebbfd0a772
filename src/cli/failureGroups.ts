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

/**
 * At most this many groups are counted in one run: a sender that sets a new subject on every message
 * makes as many groups as messages. The first groups met are kept; the failures of any later group
 * are counted as left out, and the run says how many.
 */
export const maxGroups = 1000;

/** Groups counted as the items stream past: the memory is the groups', never the items'. */
export interface GroupTally {
  readonly add: (item: FailureItem) => void;
  /** The groups, largest first (then oldest first); `leftOut`: failures of groups past the cap. */
  readonly result: () => { readonly groups: FailureGroup[]; readonly leftOut: number };
}

export function groupTally(window: TimeWindow, cap = maxGroups): GroupTally {
  const groups = new Map<string, FailureGroup>();
  let leftOut = 0;
  const add = (item: FailureItem) => {
    if (!isInWindow(item, window)) return;
    const id = failureGroupId(item);
    const seen = groups.get(id);
    if (!seen && groups.size >= cap) return void (leftOut += 1);
    groups.set(
      id,
      seen
        ? { ...seen, count: seen.count + 1, oldest: item.at < seen.oldest ? item.at : seen.oldest, newest: item.at > seen.newest ? item.at : seen.newest }
        : { id, source: item.source, entity: item.entity, reason: item.reason, messageType: item.messageType, count: 1, oldest: item.at, newest: item.at },
    );
  };
  const result = () => ({ groups: [...groups.values()].sort((a, b) => b.count - a.count || compareText(a.oldest, b.oldest)), leftOut });
  return { add, result };
}

/** A group's members as the items stream past: the oldest `max` are kept, never more than twice that at once. */
export interface MemberPick {
  readonly add: (item: FailureItem) => void;
  readonly members: () => FailureItem[];
}

export function groupMemberPick(groupId: string, window: TimeWindow, max: number): MemberPick {
  let kept: FailureItem[] = [];
  // A stable sort: members of the same instant stay in the order they were met (sequence order).
  const oldest = () => [...kept].sort((a, b) => compareText(a.at, b.at)).slice(0, max);
  const add = (item: FailureItem) => {
    if (!isInWindow(item, window) || failureGroupId(item) !== groupId) return;
    kept.push(item);
    if (kept.length >= 2 * max) kept = oldest();
  };
  return { add, members: oldest };
}

/** The groups of the items inside the window, largest first (then oldest first). */
export function groupFailures(items: readonly FailureItem[], window: TimeWindow): FailureGroup[] {
  const tally = groupTally(window, Number.POSITIVE_INFINITY);
  items.forEach(tally.add);
  return tally.result().groups;
}

/** A group's members inside the window, oldest first, at most `max`. */
export function groupMembers(items: readonly FailureItem[], groupId: string, window: TimeWindow, max: number): FailureItem[] {
  const pick = groupMemberPick(groupId, window, max);
  items.forEach(pick.add);
  return pick.members();
}

/** `--max`: a whole number from 1 to 10,000, so one run stays bounded. */
export function parseMax(text: string): number {
  const max = /^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(max >= 1 && max <= 10_000)) throw new Error(`--max "${text}" is not a whole number from 1 to 10000`);
  return max;
}

function isInWindow(item: FailureItem, window: TimeWindow): boolean {
  const at = Date.parse(item.at);
  return at >= window.sinceMs && at <= window.untilMs;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
