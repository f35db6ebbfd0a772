import type { Command } from 'commander';
import { loadOperatorActionRetentionSeconds } from '../config.js';
import type { DocumentStore } from '../idempotency/index.js';
import { actionsInWindow, operatorActionDocType, operatorActionPartitionsBetween } from './operatorAction.js';
import type { OperatorActionDocument } from './operatorAction.js';
import { cut } from './tableCell.js';
import { oneLine } from './terminalText.js';
import { timeWindowOf } from './timeWindow.js';
import type { TimeWindow } from './timeWindow.js';

export interface AuditContext {
  readonly store: DocumentStore;
  readonly now: () => number;
}

/** The records of a window, read month partition by month partition (never a cross-partition fan-out). */
export async function listOperatorActions(ctx: AuditContext, window: TimeWindow): Promise<OperatorActionDocument[]> {
  const partitions = operatorActionPartitionsBetween(window.sinceMs, window.untilMs);
  const found = await Promise.all(partitions.map((partitionKey) => ctx.store.find<OperatorActionDocument>({ docType: operatorActionDocType, partitionKey })));
  return actionsInWindow(
    found.flat().map((f) => f.document),
    window.sinceMs,
    window.untilMs,
  );
}

type WithStore = (run: (ctx: AuditContext) => Promise<void>) => Promise<void>;

/** `audit`: what operators did with this tool, oldest first. */
export function addAuditCommand(
  program: Command,
  io: { stdout(line: string): void; env: Readonly<Record<string, string | undefined>> },
  withStore: WithStore,
): void {
  program
    .command('audit')
    .description(
      'the operator-action log: every command that changed something, who ran it, when, on what and why (kept DLQ_RESUBMIT_HORIZON_SECONDS or INBOX_MARKER_TTL_SECONDS, whichever is longer)',
    )
    .option('--since <time>', 'from this time (2026-12-03T08:00Z) or this long ago (2h, 7d); default: as far back as records are kept')
    .option('--until <time>', 'up to this time or this long ago; default: now')
    .option('--json', 'print JSON for scripts')
    .action(async (options: { since?: string; until?: string; json?: boolean }) => {
      await withStore(async (ctx) => {
        const window = timeWindowOf(options, ctx.now(), loadOperatorActionRetentionSeconds(io.env) * 1000);
        const rows = await listOperatorActions(ctx, window);
        io.stdout(options.json ? JSON.stringify(rows, null, 2) : auditTable(rows));
      });
    });
}

export function auditTable(rows: readonly OperatorActionDocument[]): string {
  const header = `${cut('AT', 20)}  ${cut('OPERATOR', 24)}  ${cut('COMMAND', 18)}  ${cut('STATE', 12)}  ${cut('TARGETS', 30)}  WHY`;
  const lines = rows.map((r) => {
    const state = r.state === 'finished' ? `exit ${String(r.exitCode)}` : 'unfinished';
    const why = [r.ticket, r.why].filter((x) => x !== undefined).join(': ');
    const targets = r.targets.length > 0 ? r.targets.join(' ') : r.options.all === true ? '--all' : '(filters)';
    return `${cut(r.at.slice(0, 19), 20)}  ${cut(r.operator.name, 24)}  ${cut(r.command, 18)}  ${cut(state, 12)}  ${cut(targets, 30)}  ${oneLine(why)}`;
  });
  return [header, ...lines, `${rows.length} operator action(s)`].join('\n');
}
