import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { bulkCommandPaths, isBulkRun, parseGroupId, plansOnly } from '../../../src/cli/bulkCommands.js';
import { passesBulkFilter, takeBulk } from '../../../src/cli/bulkFilter.js';
import { dlqProgram } from '../../../src/cli/dlqProgram.js';
import { failureGroupId } from '../../../src/cli/failureGroups.js';
import type { FailureItem } from '../../../src/cli/failureGroups.js';
import { commandKinds, commandPath, leafCommands } from '../../../src/cli/operatorActionLog.js';

const help: string[] = [];
const program = dlqProgram({ stdout: (t) => help.push(t), stderr: () => undefined, env: {} }, () => undefined);
const leaves = leafCommands(program);
const has = (command: Command, flag: string) => command.options.some((o) => o.long === flag);
/** A command that can act on more than one thing: `--all`, or a variadic argument. */
const actsOnMany = (command: Command) => has(command, '--all') || command.registeredArguments.some((a) => a.variadic);

describe('the bulk commands, found by walking the command tree', () => {
  it('are exactly the commands that take --all or several targets, plus groups retry', () => {
    expect(leaves.filter(actsOnMany).map(commandPath).sort()).toEqual([...bulkCommandPaths].filter((p) => p !== 'groups retry').sort());
    expect(bulkCommandPaths.has('groups retry')).toBe(true);
  });

  describe.each([...bulkCommandPaths].map((path) => [path]))('%s', (path) => {
    const command = leaves.find((c) => commandPath(c) === path) as Command;
    it('takes a failure group, a time window, --max, --yes and --dry-run', () => {
      for (const flag of ['--since', '--until', '--max', '--yes', '--dry-run']) expect(has(command, flag), flag).toBe(true);
      expect(has(command, '--group') || command.registeredArguments.some((a) => a.name() === 'groupId')).toBe(true);
      expect(command.options.find((o) => o.long === '--max')?.defaultValue).toBe(100);
    });
    it('shows in --help that without --yes a bulk run only shows its plan, and the default of --max', () => {
      help.length = 0;
      command.outputHelp();
      const text = help.join('\n');
      expect(text).toMatch(/--yes\s+act/);
      expect(text).toMatch(/--max <n>[\s\S]*\(default:\s+100\)/);
    });
  });

  it('leaves every other command that changes something acting on one named target', () => {
    const single = leaves.filter((c) => commandKinds[commandPath(c)] !== 'read-only' && !bulkCommandPaths.has(commandPath(c)));
    expect(single.map(commandPath)).toEqual(['shipments resolve']);
    for (const c of single) expect(c.registeredArguments.map((a) => [a.required, a.variadic])).toEqual([[true, false]]);
  });
});

describe('isBulkRun and plansOnly', () => {
  it('call a run bulk when --all, a filter or more than one target picks what it acts on', () => {
    expect(isBulkRun('resubmit', ['7'], {})).toBe(false);
    expect(isBulkRun('resubmit', ['7', '8'], {})).toBe(true);
    expect(isBulkRun('resubmit', [], { all: true })).toBe(true);
    for (const filter of ['reason', 'olderThan', 'newerThan', 'bodyContains', 'order', 'group', 'since', 'until'])
      expect(isBulkRun('parked discard', [], { [filter]: 'x' }), filter).toBe(true);
    expect(isBulkRun('groups retry', ['g-0123456789'], {})).toBe(true);
    expect(isBulkRun('shipments resolve', ['o-1'], { all: true })).toBe(false);
  });
  it('plan only for a bulk run without --yes, or any --dry-run', () => {
    expect(plansOnly('purge', [], { all: true })).toBe(true);
    expect(plansOnly('purge', [], { all: true, yes: true })).toBe(false);
    expect(plansOnly('purge', [], { all: true, yes: true, dryRun: true })).toBe(true);
    expect(plansOnly('resubmit', ['7'], {})).toBe(false);
    expect(plansOnly('resubmit', ['7'], { dryRun: true })).toBe(true);
  });
  it('names a bad group id', () => {
    expect(parseGroupId(' g-0123456789 ')).toBe('g-0123456789');
    for (const bad of ['g-123', 'G-0123456789', '0123456789', 'g-0123456789a'])
      expect(() => parseGroupId(bad)).toThrow(/is not a failure group id such as g-0123456789/);
  });
});

describe('the bulk filter', () => {
  const item = (target: string, at: string, reason = 'ConsumerBug'): FailureItem => ({
    source: 'dead-letter',
    entity: 'orders/$deadletterqueue',
    reason,
    messageType: 'OrderPlaced',
    at,
    target,
  });
  const items = [
    item('3', '2026-12-03T08:03:00.000Z'),
    item('1', '2026-12-03T08:01:00.000Z'),
    item('x', '2026-12-03T08:00:00.000Z', 'Other'),
    item('2', '2026-12-03T08:02:00.000Z'),
  ];
  const group = failureGroupId(items[0] as FailureItem);

  it("keeps a group's members inside the window, both ends included", () => {
    expect(passesBulkFilter(items[0] as FailureItem, { groupId: group, max: 1 })).toBe(true);
    expect(passesBulkFilter(items[2] as FailureItem, { groupId: group, max: 1 })).toBe(false);
    expect(
      passesBulkFilter(items[1] as FailureItem, { sinceMs: Date.parse('2026-12-03T08:01:00Z'), untilMs: Date.parse('2026-12-03T08:01:00Z'), max: 1 }),
    ).toBe(true);
    expect(passesBulkFilter(items[1] as FailureItem, { sinceMs: Date.parse('2026-12-03T08:01:00.001Z'), max: 1 })).toBe(false);
    expect(passesBulkFilter(items[0] as FailureItem, { untilMs: Date.parse('2026-12-03T08:02:59.999Z'), max: 1 })).toBe(false);
  });
  it('takes the oldest first, at most --max', () => {
    expect(takeBulk(items, (i) => i, { groupId: group, max: 2 }).map((i) => i.target)).toEqual(['1', '2']);
    expect(takeBulk(items, (i) => i, { sinceMs: Date.parse('2026-12-03T08:02:00Z'), max: 10 }).map((i) => i.target)).toEqual(['2', '3']);
  });
});
