import { describe, expect, it } from 'vitest';
import { failureGroupId, groupFailures, groupMemberPick, groupMembers, groupTally, parseMax } from '../../../src/cli/failureGroups.js';
import { parseScanMax } from '../../../src/cli/scanBound.js';
import type { FailureItem } from '../../../src/cli/failureGroups.js';

const dlq = (target: string, at: string, reason = 'PayloadConflict', messageType = 'PaymentReceived'): FailureItem => ({
  source: 'dead-letter',
  entity: 'orders/$deadletterqueue',
  reason,
  messageType,
  at,
  target,
});
const all = { sinceMs: 0, untilMs: Date.parse('2100-01-01T00:00:00Z') };
const items = [
  dlq('3', '2026-12-03T08:03:00.000Z'),
  dlq('1', '2026-12-03T08:01:00.000Z'),
  dlq('2', '2026-12-03T08:02:00.000Z', 'MaxDeliveryCountExceeded'),
  {
    source: 'parked',
    entity: 'parked',
    reason: 'PayloadConflict',
    messageType: 'PaymentReceived',
    at: '2026-12-03T07:00:00.000Z',
    target: 'o-1/p-1',
  } as FailureItem,
];

describe('failureGroupId', () => {
  it('is the same for the same (entity, reason, type) and differs when any of them does', () => {
    expect(failureGroupId(items[0]!)).toBe(failureGroupId(items[1]!));
    expect(failureGroupId(items[0]!)).toMatch(/^g-[0-9a-f]{10}$/);
    expect(new Set(items.map(failureGroupId)).size).toBe(3);
    // Whatever the names hold, ("a", "b<NUL>c") and ("a<NUL>b", "c") are different groups.
    expect(failureGroupId({ entity: 'a', reason: 'b\u0000c', messageType: '' })).not.toBe(failureGroupId({ entity: 'a\u0000b', reason: 'c', messageType: '' }));
  });
});

describe('groupFailures', () => {
  it('counts each group with its oldest and newest, largest first', () => {
    expect(groupFailures(items, all)).toEqual([
      {
        id: failureGroupId(items[0]!),
        source: 'dead-letter',
        entity: 'orders/$deadletterqueue',
        reason: 'PayloadConflict',
        messageType: 'PaymentReceived',
        count: 2,
        oldest: '2026-12-03T08:01:00.000Z',
        newest: '2026-12-03T08:03:00.000Z',
      },
      expect.objectContaining({ entity: 'parked', count: 1 }),
      expect.objectContaining({ reason: 'MaxDeliveryCountExceeded', count: 1 }),
    ]);
  });
  it('leaves out what falls outside the window', () => {
    const window = { sinceMs: Date.parse('2026-12-03T08:02:00Z'), untilMs: Date.parse('2026-12-03T08:02:30Z') };
    expect(groupFailures(items, window).map((g) => g.reason)).toEqual(['MaxDeliveryCountExceeded']);
  });
});

describe('groupMembers', () => {
  it("gives a group's members in the window, oldest first, up to --max", () => {
    const id = failureGroupId(items[0]!);
    expect(groupMembers(items, id, all, 10).map((m) => m.target)).toEqual(['1', '3']);
    expect(groupMembers(items, id, all, 1).map((m) => m.target)).toEqual(['1']);
    expect(groupMembers(items, id, { sinceMs: Date.parse('2026-12-03T08:02:00Z'), untilMs: all.untilMs }, 10).map((m) => m.target)).toEqual(['3']);
  });
});

describe('groupMemberPick', () => {
  it('keeps the oldest --max of a stream met newest first, and of the same instant the first met', () => {
    const pick = groupMemberPick(failureGroupId(items[0]!), all, 3);
    for (let n = 10_000; n >= 1; n -= 1) pick.add(dlq(String(n), new Date(Date.parse('2026-12-03T08:00:00Z') + n * 1000).toISOString()));
    pick.add(dlq('tie-later', new Date(Date.parse('2026-12-03T08:00:00Z') + 2000).toISOString()));
    expect(pick.members().map((m) => m.target)).toEqual(['1', '2', 'tie-later']);
  });
});

describe('groupTally', () => {
  it('counts the first groups met up to its cap and the failures of later groups as left out', () => {
    const tally = groupTally(all, 2);
    for (const reason of ['a', 'b', 'a', 'c', 'd', 'c']) tally.add(dlq('1', '2026-12-03T08:00:00.000Z', reason));
    const { groups, leftOut } = tally.result();
    expect(groups.map((g) => [g.reason, g.count])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(leftOut).toBe(3);
  });
});

describe('parseScanMax', () => {
  it('takes 1 to 1000000 and names anything else', () => {
    expect(parseScanMax('5000')).toBe(5000);
    for (const bad of ['0', '1000001', '-1', '2.5', 'all', '']) expect(() => parseScanMax(bad)).toThrow(/is not a whole number from 1 to 1000000/);
  });
});

describe('parseMax', () => {
  it('takes 1 to 10000 and names anything else', () => {
    expect(parseMax('25')).toBe(25);
    for (const bad of ['0', '10001', '-1', '2.5', 'many', '']) expect(() => parseMax(bad)).toThrow(/is not a whole number from 1 to 10000/);
  });
});
