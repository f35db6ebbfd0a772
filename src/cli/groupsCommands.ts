import { Option } from 'commander';
import type { Command } from 'commander';
import type { DocumentQuery, StoredDocument } from '../idempotency/index.js';
import type { ParkedItemDocument } from '../orders/index.js';
import type { OutboxDocument } from '../outbox/index.js';
import type { ShipmentRecord } from '../shipments/index.js';
import { peekAll } from './deadLetterQueue.js';
import type { EntityAddress } from './deadLetterQueue.js';
import { resubmitDeadLetters } from './dlqCommands.js';
import type { DlqContext, ResubmitHooks } from './dlqCommands.js';
import { noBulkFilter } from './bulkFilter.js';
import { defaultMax, parseGroupId, plansOnly, planPrefix, withBulkOptions } from './bulkCommands.js';
import { groupMemberPick, groupTally, maxGroups, parseMax } from './failureGroups.js';
import { deadLetterItem, outboxItem, parkedItem } from './failureItems.js';
import type { FailureGroup, FailureItem } from './failureGroups.js';
import { requeueOutbox } from './outboxCommands.js';
import { resubmitParked, selectableStates } from './parkedCommands.js';
import type { ParkedContext } from './parkedCommands.js';
import type { ResubmitPolicy } from './resubmitHorizon.js';
import { resolveShipment } from './shipmentCommands.js';
import { deadLetterStop, defaultScanMax, findBounded, scanMaxOption, scanStops } from './scanBound.js';
import type { ScanBound } from './scanBound.js';
import { cut } from './tableCell.js';
import { oneLine } from './terminalText.js';
import { timeWindowOf } from './timeWindow.js';
import type { TimeWindow } from './timeWindow.js';

/** What `groups` needs from the program: the connections it already knows how to open. */
export interface GroupsConnections {
  /** The dead-letter queues to look in: the queue file's entities (the orders queue, each `order-events` subscription). */
  readonly deadLetterEntities: () => readonly EntityAddress[];
  readonly deadLetters: (address: EntityAddress, run: (ctx: DlqContext) => Promise<void>) => Promise<void>;
  /** Undefined when no Cosmos DB endpoint is given: then only the dead-letter queues are grouped. */
  readonly store: ((needsQueue: boolean, run: (ctx: ParkedContext) => Promise<void>) => Promise<void>) | undefined;
  readonly policy: () => ResubmitPolicy;
  readonly hooks?: ResubmitHooks;
}

/** The dead-letter queues of infra/servicebus-queues.json, under the names the settings give them (a doctor test keeps the two equal). */
export function queueFileEntities(queue: string | undefined, env: Readonly<Record<string, string | undefined>>): EntityAddress[] {
  const topic = env.ORDER_EVENTS_TOPIC_NAME ?? 'order-events';
  return [{ queue: queue ?? 'orders' }, ...[env.FULFILMENT_SUBSCRIPTION_NAME ?? 'fulfilment', 'audit'].map((subscription) => ({ topic, subscription }))];
}

interface GroupsIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly now?: () => number;
}

/** One member's outcome, whatever kind of failure it was. */
export interface GroupActionReport {
  readonly target: string;
  readonly outcome: string;
  readonly detail: string;
}

// Everything the app keeps is younger than the marker TTL; 400 days covers any setting we allow.
const defaultSpanMs = 400 * 24 * 3600 * 1000;

/** `groups` and `groups retry <id>`: failures by (entity, reason, message type), and a retry of one group. */
export function addGroupsCommands(program: Command, io: GroupsIo, setExitCode: (code: number) => void, connections: () => GroupsConnections): void {
  const groups = program
    .command('groups')
    .description(
      'failures grouped by (entity, reason, message type): dead-lettered messages of each entity in the queue file, rejected (or resubmitting) parked items, failed outbox entries, escalated shipments',
    );
  const windowed = (command: Command) =>
    command
      .option('--since <time>', 'only failures from this time (2026-12-03T08:00Z) or this long ago (2h, 7d)')
      .option('--until <time>', 'only failures up to this time or this long ago')
      .addOption(scanMaxOption('read at most this many dead letters of each entity (in sequence order) and of each kind of stored failure (oldest first)'))
      .option('--json', 'print JSON for scripts');
  windowed(groups.command('list', { isDefault: true }).description('one row per group: id, entity, reason, message type, count, oldest, newest')).action(
    async (options: WindowOptions) => {
      const tally = groupTally(windowOf(options, io));
      const { unread, truncated } = await gatherFailures(connections(), io, tally.add, options.scanMax);
      const { groups: rows, leftOut } = tally.result();
      if (leftOut > 0) {
        truncated.push(`${leftOut} failure(s) in groups past the first ${maxGroups} not shown`);
        io.stderr(
          `warning: ${leftOut} failure(s) in groups past the first ${maxGroups} not shown (a sender setting a new subject on each message?): narrow with --since/--until`,
        );
      }
      io.stdout(options.json ? JSON.stringify({ groups: rows, unread, truncated }, null, 2) : groupsTable(rows));
      setExitCode(unread.length > 0 || truncated.length > 0 ? 1 : 0);
    },
  );
  const retry = windowed(
    groups
      .command('retry <groupId>')
      .description(
        "retry a group's members (dead letters and parked items resubmitted, outbox entries requeued, shipments handed back to the reconciler): shows the plan unless --yes",
      ),
  )
    .addOption(new Option('--max <n>', 'at most this many members, oldest first (1 to 10000)').default(defaultMax).argParser(parseMax))
    .option('--yes', 'act (without it: a dry run, the plan only)');
  withBulkOptions(retry, 'members', { group: false }).action(
    async (groupId: string, options: WindowOptions & { max: number; yes?: boolean; dryRun?: boolean }) => {
      const c = connections();
      const pick = groupMemberPick(parseGroupId(groupId), windowOf(options, io), options.max);
      const { unread, truncated } = await gatherFailures(c, io, pick.add, options.scanMax);
      const retryStops = scanStops(io.stderr, 'members past it were not reached', 'or retry again');
      const members = pick.members();
      if (members.length === 0)
        throw new Error(
          `no failure of group ${groupId} in that window${unread.length > 0 ? ` (unread: ${unread.join('; ')})` : ''}: run \`groups\` for the ids`,
        );
      const dryRun = plansOnly('groups retry', [groupId], options);
      // Members are named: a run reaches them unless one was taken since (it is then missing from the report).
      const reports = await retryMembers(c, members, dryRun, { scanMax: options.scanMax, stopped: retryStops.stopped });
      truncated.push(...retryStops.truncated);
      const failed = reports.filter((r) => r.outcome === 'failed' || r.outcome === 'refused').length;
      if (options.json) io.stdout(JSON.stringify({ group: groupId, dryRun, reports, failed, truncated }, null, 2));
      else {
        for (const r of reports) io.stdout(groupReportLine(r));
        io.stdout(`${dryRun ? planPrefix : ''}${summary(reports)}`);
      }
      setExitCode(failed > 0 || retryStops.truncated.length > 0 ? 1 : 0);
    },
  );
}

interface WindowOptions {
  since?: string;
  until?: string;
  scanMax: number;
  json?: boolean;
}

function windowOf(options: WindowOptions, io: GroupsIo): TimeWindow {
  return timeWindowOf(options, (io.now ?? Date.now)(), defaultSpanMs);
}

/**
 * Every failure the system holds, handed to `take` one at a time (the caller counts or picks; nothing
 * here keeps them). An entity that cannot be read is named, not fatal; one with more than `scanMax`
 * dead letters is read up to that many, in sequence order, and named as truncated.
 */
export async function gatherFailures(
  c: GroupsConnections,
  io: GroupsIo,
  take: (item: FailureItem) => void,
  scanMax: number = defaultScanMax,
): Promise<{ unread: string[]; truncated: string[] }> {
  const unread: string[] = [];
  const { truncated, stopped } = scanStops(io.stderr, 'counts and members leave out any further ones', 'or act on the oldest and run again');
  for (const address of c.deadLetterEntities()) {
    try {
      await c.deadLetters(address, async (ctx) => {
        let read = 0;
        for await (const m of peekAll(ctx.receiver, Math.min(250, scanMax))) {
          take(deadLetterItem(m, ctx.entityPath));
          if ((read += 1) < scanMax) continue;
          stopped(deadLetterStop(ctx.entityPath, scanMax));
          break;
        }
      });
    } catch (error) {
      unread.push(`${JSON.stringify(address)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (c.store) await c.store(false, (ctx) => storeFailures(ctx, take, { scanMax, stopped }));
  else unread.push('parked items, outbox entries and shipments: no --cosmos-endpoint');
  for (const line of unread) io.stderr(`warning: could not read ${oneLine(line)}`);
  return { unread, truncated };
}

/** The store's failures, each kind read oldest first (parked items, outbox entries) and at most `scanMax` of it: a flood of parked items is as bounded as one of dead letters. */
async function storeFailures(ctx: ParkedContext, take: (item: FailureItem) => void, bound: ScanBound): Promise<void> {
  const oldest = async <D extends StoredDocument>(what: string, query: DocumentQuery): Promise<D[]> =>
    (await findBounded<D>(ctx.store, what, query, bound)).map((f) => f.document);
  // A claimed item whose resubmit died needs a person as much as a rejected one: `groups retry` takes it up.
  for (const state of selectableStates)
    for (const p of await oldest<ParkedItemDocument>(`parked items (${state})`, { docType: 'parked', equals: { state }, orderBy: 'parkedAt' }))
      take(parkedItem({ ...p, reason: p.rejection?.reason, rejectedAt: p.rejection?.rejectedAt }));
  for (const e of await oldest<OutboxDocument>('outbox entries (failed)', { docType: 'outbox', equals: { state: 'failed' }, orderBy: 'createdAt' }))
    take(outboxItem({ ...e, reason: e.failure?.reason }));
  // Not ordered: the container indexes no time of a shipment record's (ORDER BY needs an indexed path), so past the cap it is any of them.
  for (const s of await oldest<ShipmentRecord>('shipments (escalated)', { docType: 'shipment', equals: { state: 'escalated' } }))
    take({
      source: 'shipment',
      entity: 'shipments',
      reason: s.escalation?.reason ?? '(none)',
      messageType: 'ShipmentBooking',
      at: s.escalation?.at ?? s.updatedAt,
      target: s.orderId,
    });
}

/** A group is one entity and one kind of failure: its members all go through the same command. */
async function retryMembers(c: GroupsConnections, members: readonly FailureItem[], dryRun: boolean, bound: ScanBound): Promise<GroupActionReport[]> {
  const first = members[0] as FailureItem;
  const targets = members.map((m) => m.target);
  const reports: GroupActionReport[] = [];
  if (first.source === 'dead-letter') {
    const address = c.deadLetterEntities().find((a) => first.entity.startsWith(`${a.queue ?? `${a.topic ?? ''}/subscriptions/${a.subscription ?? ''}`}/`));
    if (!address) throw new Error(`the entity of ${first.entity} is not one the tool looks in`);
    await c.deadLetters(address, async (ctx) => {
      const done = await resubmitDeadLetters(ctx, { targets, all: false }, dryRun, c.policy(), c.hooks, bound);
      reports.push(
        ...done.map((r) => ({
          target: `${r.sequenceNumber} ${r.messageId ?? ''}${r.copyMessageId ? ` -> ${r.copyMessageId}` : ''}`,
          outcome: r.outcome,
          detail: r.detail,
        })),
      );
    });
    return reports;
  }
  if (!c.store) throw new Error('this group lives in Cosmos DB: give --cosmos-endpoint');
  await c.store(first.source === 'parked', async (ctx) => {
    if (first.source === 'parked') {
      const done = await resubmitParked(ctx, { targets, all: false }, dryRun, c.policy(), bound);
      reports.push(...done.map((r) => ({ target: `${r.orderId}/${r.id}`, outcome: r.outcome, detail: r.detail })));
    } else if (first.source === 'outbox') {
      const done = await requeueOutbox(ctx, targets, false, dryRun, noBulkFilter, bound);
      reports.push(...done.map((r) => ({ target: `${r.orderId}/${r.id}`, outcome: r.outcome, detail: r.detail })));
    } else {
      for (const orderId of targets) {
        const r = await resolveShipment(ctx, orderId, { kind: 'retry' }, dryRun);
        reports.push({ target: `${r.orderId}${r.id ? `/${r.id}` : ''}`, outcome: r.outcome, detail: r.detail });
      }
    }
  });
  return reports;
}

/** One member's line of a `groups retry` report. */
export function groupReportLine(r: GroupActionReport): string {
  return `${oneLine(r.target)}  ${r.outcome}  ${oneLine(r.detail)}`;
}

function summary(reports: readonly GroupActionReport[]): string {
  const counts = reports.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.outcome]: (acc[r.outcome] ?? 0) + 1 }), {});
  return (
    Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'nothing done'
  );
}

export function groupsTable(rows: readonly FailureGroup[]): string {
  const header = `${cut('GROUP', 12)}  ${cut('ENTITY', 54)}  ${cut('REASON', 26)}  ${cut('TYPE', 18)}  ${'COUNT'.padStart(6)}  ${cut('OLDEST', 20)}  NEWEST`;
  const lines = rows.map(
    (g) =>
      `${cut(g.id, 12)}  ${cut(g.entity, 54)}  ${cut(g.reason, 26)}  ${cut(g.messageType, 18)}  ${String(g.count).padStart(6)}  ${cut(g.oldest.slice(0, 19), 20)}  ${oneLine(g.newest.slice(0, 19))}`,
  );
  return [header, ...lines, `${rows.length} group(s), ${rows.reduce((n, g) => n + g.count, 0)} failure(s)`].join('\n');
}
