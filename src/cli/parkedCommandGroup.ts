import { Option } from 'commander';
import type { Command } from 'commander';
import { bulkFilterOf, bulkStopWords, planPrefix, plansOnly, withBulkOptions } from './bulkCommands.js';
import type { BulkOptions } from './bulkCommands.js';
import type { CommandContexts } from './commandContexts.js';
import type { DlqIo } from './dlqIo.js';
import { discardParked, listParked, resubmitParked, selectableStates } from './parkedCommands.js';
import type { ListedParkedItem, ParkedActionReport, ParkedSelection } from './parkedCommands.js';
import { defaultListMax, listMaxOption, listStopWords } from './listBound.js';
import { forceHelp, resubmitPolicyOf } from './resubmitPolicyOption.js';
import { defaultScanMax, scanMaxOption, scanStops } from './scanBound.js';
import { summaryLine } from './summaryLine.js';
import { cut, idCell } from './tableCell.js';
import { oneLine, shellWord } from './terminalText.js';

interface ParkedOptions extends BulkOptions {
  order?: string;
  reason?: string;
  state?: string[];
  json?: boolean;
  force?: string;
}

const parkedStates = ['parked', 'applied', 'rejected', 'resubmitting', 'resubmitted', 'discarded'] as const;

/** `dlq parked ...`: early arrivals that could not be applied, kept in Cosmos DB rather than the dead-letter queue. */
export function addParkedCommands(program: Command, io: DlqIo, setExitCode: (code: number) => void, contexts: CommandContexts): void {
  const parked = program
    .command('parked')
    .description('payments and status changes that came before their order and could not be applied (OrderNeverArrived, CurrencyMismatch, PayloadConflict)');
  parked
    .command('list')
    .description('rejected parked items and those a resubmit claimed (or those in --state), oldest first')
    .option('--order <orderId>', "only this order's items")
    .option('--reason <reason>', 'only items rejected with this reason')
    .addOption(new Option('--state <state...>', 'these states instead of rejected and resubmitting').choices(parkedStates))
    .addOption(listMaxOption('items, the oldest'))
    .addOption(scanMaxOption('with --reason, read at most this many items of each state, the oldest'))
    .option('--json', 'print JSON for scripts')
    .action(async (options: ParkedOptions) => {
      const { truncated, stopped } = scanStops(io.stderr, ...listStopWords);
      await contexts.store(false, async (ctx) => {
        const states = options.state === undefined ? selectableStates : (options.state as (typeof parkedStates)[number][]);
        const bound = { max: options.max ?? defaultListMax, scanMax: options.scanMax ?? defaultScanMax, stopped };
        const rows = await listParked(ctx, states, { orderId: options.order, reason: options.reason }, bound);
        io.stdout(options.json ? JSON.stringify({ items: rows, truncated }, null, 2) : parkedTable(rows));
      });
      setExitCode(truncated.length > 0 ? 1 : 0);
    });
  const selected = (command: Command) =>
    withBulkOptions(
      command
        .option('--all', 'every rejected (or resubmit-claimed) item that passes the filters')
        .option('--order <orderId>', "only this order's items")
        .option('--reason <reason>', 'only items rejected with this reason'),
      'items',
    ).option('--json', 'print the report as JSON');
  selected(
    parked
      .command('resubmit [targets...]')
      .description(
        'send rejected items (and those a resubmit claimed and did not finish) back to the orders queue (by MessageId, dedup key or <orderId>/<item id>); a bulk run shows its plan unless --yes',
      ),
  )
    .option('--force <reason>', forceHelp('parked item'))
    .action(async (targets: string[], options: ParkedOptions) => {
      const selection = parkedSelection(targets, options);
      const policy = resubmitPolicyOf(io, options.force);
      const dryRun = plansOnly('parked resubmit', targets, options);
      const { truncated, stopped } = scanStops(io.stderr, ...bulkStopWords);
      await contexts.store(true, async (ctx) => {
        const reports = await resubmitParked(ctx, selection, dryRun, policy, { scanMax: options.scanMax ?? defaultScanMax, stopped });
        setExitCode(parkedReport(io, reports, selection, options.json === true, dryRun, truncated));
      });
    });
  selected(
    parked
      .command('discard [targets...]')
      .description(
        'drop rejected items for good: their effect will never be applied (an item a resubmit claimed is refused); a bulk run shows its plan unless --yes, one named item asks first',
      )
      .option('--yes', 'act without asking (a bulk run: act, not only show the plan)'),
  ).action(async (targets: string[], options: ParkedOptions) => {
    const selection = parkedSelection(targets, options);
    const dryRun = plansOnly('parked discard', targets, options);
    const { truncated, stopped } = scanStops(io.stderr, ...bulkStopWords);
    const scanMax = options.scanMax ?? defaultScanMax;
    await contexts.store(false, async (ctx) => {
      if (!dryRun && !options.yes) {
        // Claimed items are refused, not discarded: the question counts only what would go (the run reports its own stop).
        const planned = (await discardParked(ctx, selection, true, { scanMax, stopped: () => undefined })).filter((r) => r.outcome === 'would-discard');
        if (!io.confirm) throw new Error(`refusing to discard ${planned.length} parked item(s) without --yes (no terminal to ask)`);
        if (!(await io.confirm(`Discard ${planned.length} parked item(s)? Their effect will never be applied. [y/N] `))) {
          io.stderr('nothing discarded');
          return;
        }
      }
      setExitCode(parkedReport(io, await discardParked(ctx, selection, dryRun, { scanMax, stopped }), selection, options.json === true, dryRun, truncated));
    });
  });
}

function parkedSelection(targets: string[], options: ParkedOptions): ParkedSelection {
  if (
    targets.length === 0 &&
    !options.all &&
    options.reason === undefined &&
    options.order === undefined &&
    options.group === undefined &&
    options.since === undefined &&
    options.until === undefined
  ) {
    throw new Error('name parked items by MessageId, dedup key or <orderId>/<item id>, or use --all, --order, --reason, --group, --since or --until');
  }
  return { targets, all: options.all === true || targets.length === 0, reason: options.reason, orderId: options.order, bulk: bulkFilterOf(options) };
}

function parkedReport(
  io: DlqIo,
  reports: ParkedActionReport[],
  selection: ParkedSelection,
  json: boolean,
  dryRun: boolean,
  truncated: readonly string[],
): number {
  // A refused item is not done: the exit code says so, as for a failure.
  const failed = reports.filter((r) => r.outcome === 'failed' || r.outcome === 'refused').length;
  const matched = (t: string) => reports.some((r) => r.messageId === t || r.dedupKey === t || `${r.orderId}/${r.id}` === t);
  const missing = selection.targets.filter((t) => !matched(t)).length;
  if (json) {
    io.stdout(JSON.stringify({ dryRun, reports, failed, missing, truncated }, null, 2));
  } else {
    for (const r of reports) io.stdout(parkedReportLine(r));
    io.stdout(`${dryRun ? planPrefix : ''}${summaryLine(reports, 'no parked item matched', missing, 'item(s)')}`);
  }
  return failed > 0 || missing > 0 || truncated.length > 0 ? 1 : 0;
}

/** One item's line of a resubmit or discard report. */
export function parkedReportLine(r: ParkedActionReport): string {
  return `${shellWord(`${r.orderId}/${r.id}`)}  ${r.messageId === undefined ? '' : shellWord(r.messageId)}${r.copyMessageId ? ` -> ${shellWord(r.copyMessageId)}` : ''}  ${r.outcome}  ${oneLine(r.detail)}`;
}

/** The `parked list` table: one line per item, every state spelt out in full. */
export function parkedTable(rows: ListedParkedItem[]): string {
  const header = `${cut('ORDER', 24)}  ${cut('TYPE', 18)}  ${cut('MESSAGE ID', 24)}  ${cut('STATE', 12)}  ${cut('REASON', 18)}  ${cut('PARKED', 20)}  DESCRIPTION`;
  const lines = rows.map(
    (r) =>
      `${cut(r.orderId, 24)}  ${cut(r.messageType, 18)}  ${idCell(r.messageId, 24)}  ${cut(r.state, 12)}  ${cut(r.reason, 18)}  ${cut(r.parkedAt.slice(0, 19), 20)}  ${oneLine(r.description ?? '')}`,
  );
  return [header, ...lines, `${rows.length} parked item(s)`].join('\n');
}
