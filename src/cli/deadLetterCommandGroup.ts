import type { Command } from 'commander';
import { bulkFilterOf, bulkStopWords, planPrefix, plansOnly, withBulkOptions } from './bulkCommands.js';
import type { BulkOptions } from './bulkCommands.js';
import type { CommandContexts } from './commandContexts.js';
import { isEmptySelection } from './deadLetterSelection.js';
import type { Selection } from './deadLetterSelection.js';
import { listDeadLetters, purgeDeadLetters, resubmitDeadLetters, showDeadLetter } from './dlqCommands.js';
import type { ActionReport, ListedMessage } from './dlqCommands.js';
import type { DlqIo } from './dlqIo.js';
import { durationOption } from './durationOption.js';
import { runEditResubmit } from './editResubmitCommand.js';
import { openPurgeExport } from './purgeExport.js';
import { forceHelp, resubmitPolicyOf } from './resubmitPolicyOption.js';
import { defaultScanMax, scanMaxOption, scanStops } from './scanBound.js';
import { defaultListMax, listMaxOption, listStopWords } from './listBound.js';
import { summaryLine } from './summaryLine.js';
import { cut, idCell } from './tableCell.js';
import { oneLine, shellWord } from './terminalText.js';

interface FilterOptions extends BulkOptions {
  reason?: string;
  olderThan?: number;
  newerThan?: number;
  bodyContains?: string;
  json?: boolean;
  force?: string;
  export?: string | boolean;
  edit?: boolean;
  bodyFile?: string;
}

/** `list`, `show`, `resubmit` and `purge`: the dead-lettered messages of the queue or subscription the global options name. */
export function addDeadLetterCommands(program: Command, io: DlqIo, setExitCode: (code: number) => void, contexts: CommandContexts): void {
  withFilters(program.command('list').description('one row per dead-lettered message, with what the store knows of it, in sequence order'))
    .addOption(listMaxOption('rows (each is a store read), the first in sequence order'))
    .addOption(scanMaxOption('read at most this many dead letters, in sequence order'))
    .option('--json', 'print JSON for scripts')
    .action(async (options: FilterOptions) => {
      const { truncated, stopped } = scanStops(io.stderr, ...listStopWords);
      await contexts.deadLetters(async (ctx) => {
        const { max, scanMax } = { max: options.max ?? defaultListMax, scanMax: options.scanMax ?? defaultScanMax };
        const rows = await listDeadLetters(ctx, selectionOf([], { ...options, all: true }), { max, scanMax, stopped });
        io.stdout(options.json ? JSON.stringify({ messages: rows, truncated }, null, 2) : deadLetterTable(rows));
      });
      setExitCode(truncated.length > 0 ? 1 : 0);
    });

  program
    .command('show <sequenceNumberOrMessageId>')
    .description('every property and the body of one dead-lettered message, as JSON')
    .option('--json', 'print JSON (show always does; accepted as on every other listing)')
    .action(async (target: string) => {
      await contexts.deadLetters(async (ctx) => {
        const shown = await showDeadLetter(ctx, target);
        if (!shown) {
          io.stderr(`no dead-lettered message has sequence number or MessageId ${shellWord(target)}`);
          setExitCode(1);
          return;
        }
        io.stdout(JSON.stringify(shown, null, 2));
      });
    });

  withBulkOptions(
    withFilters(
      program
        .command('resubmit [targets...]')
        .description(
          'send copies back to the queue, then remove the originals; a bulk run (--all, a filter, more than one target) shows its plan unless --yes',
        ),
    ).option('--all', 'every message that passes the filters'),
    'messages',
  )
    .option('--force <reason>', forceHelp('dead-lettered message'))
    .option('--json', 'print the report as JSON')
    .option(
      '--edit',
      "one message: edit its body in $EDITOR, then send it under <key>~edit-<n> (edited-from: <key>); refused if the original's effect is applied",
    )
    .option('--body-file <file>', 'as --edit, with the body from this JSON file')
    .action(async (targets: string[], options: FilterOptions) => {
      if (options.edit || options.bodyFile !== undefined) {
        await contexts.deadLetters(async (ctx) => setExitCode(await runEditResubmit(ctx, targets, options, io)));
        return;
      }
      const selection = requireSelection(targets, options);
      const policy = resubmitPolicyOf(io, options.force);
      const dryRun = plansOnly('resubmit', targets, options);
      const { truncated, stopped } = scanStops(io.stderr, ...bulkStopWords);
      await contexts.deadLetters(async (ctx) => {
        const reports = await resubmitDeadLetters(ctx, selection, dryRun, policy, io.hooks, { scanMax: options.scanMax ?? defaultScanMax, stopped });
        setExitCode(report(io, reports, selection, options.json === true, dryRun, truncated));
      });
    });

  withBulkOptions(
    withFilters(
      program
        .command('purge [targets...]')
        .description(
          'remove dead-lettered messages for good; a bulk run (--all, a filter, more than one target) shows its plan unless --yes, one named message asks first',
        ),
    )
      .option('--all', 'every message that passes the filters')
      .option('--yes', 'act without asking (a bulk run: act, not only show the plan)'),
    'messages',
  )
    .option('--json', 'print the report as JSON')
    .option('--export <file>', 'write what is removed to this JSON-lines file first (default: purge-<entity>-<time>.jsonl here)')
    .option('--no-export', 'remove without keeping a copy (needs --why)')
    .action(async (targets: string[], options: FilterOptions) => {
      const selection = requireSelection(targets, options);
      const dryRun = plansOnly('purge', targets, options);
      const { truncated, stopped } = scanStops(io.stderr, ...bulkStopWords);
      const bound = { scanMax: options.scanMax ?? defaultScanMax, stopped };
      await contexts.deadLetters(async (ctx) => {
        if (!dryRun && !options.yes) {
          // The question's count is the plan's: its own stop is not the run's, which reports its own.
          const planned = await purgeDeadLetters(ctx, selection, true, undefined, { scanMax: bound.scanMax, stopped: () => undefined });
          const question = `Purge ${planned.length} dead-lettered message(s) from ${ctx.entityPath}? They cannot be recovered. [y/N] `;
          if (!io.confirm) throw new Error(`refusing to purge ${planned.length} message(s) without --yes (no terminal to ask)`);
          if (!(await io.confirm(question))) {
            io.stderr('nothing purged');
            return;
          }
        }
        const exported = typeof options.export === 'string' && !dryRun ? await openPurgeExport(options.export) : undefined;
        const reports = await purgeDeadLetters(ctx, selection, dryRun, exported?.write, bound).finally(() => exported?.close());
        if (exported) io.stderr(`exported ${exported.count()} message(s) to ${exported.path}`);
        setExitCode(report(io, reports, selection, options.json === true, dryRun, truncated));
      });
    });
}

function withFilters(command: Command): Command {
  return command
    .option('--reason <reason>', 'only messages with this DeadLetterReason')
    .option('--older-than <duration>', 'only messages enqueued longer ago than this (e.g. 2h)', durationOption)
    .option('--newer-than <duration>', 'only messages enqueued more recently than this (e.g. 30m)', durationOption)
    .option('--body-contains <text>', 'only messages whose body contains this text');
}

function selectionOf(targets: string[], options: FilterOptions): Selection {
  return {
    targets,
    all: options.all === true,
    reason: options.reason,
    olderThanMs: options.olderThan,
    newerThanMs: options.newerThan,
    bodyContains: options.bodyContains,
    bulk: bulkFilterOf(options),
  };
}

function requireSelection(targets: string[], options: FilterOptions): Selection {
  const selection = selectionOf(targets, options);
  if (isEmptySelection(selection))
    throw new Error(
      'name messages by sequence number or MessageId, or use --all or a filter (--reason, --older-than, --newer-than, --body-contains, --group, --since, --until)',
    );
  return selection;
}

/** Prints the per-message report and a summary; returns the exit code. */
function report(io: DlqIo, reports: ActionReport[], selection: Selection, json: boolean, dryRun: boolean, truncated: readonly string[]): number {
  const failed = reports.filter((r) => r.outcome === 'failed').length;
  const refused = reports.filter((r) => r.outcome === 'refused').length;
  const missing = !selection.all && selection.targets.length > 0 ? selection.targets.length - reports.length : 0;
  if (json) {
    io.stdout(JSON.stringify({ dryRun, reports, failed, refused, missing, truncated }, null, 2));
  } else {
    for (const r of reports) io.stdout(deadLetterReportLine(r));
    io.stdout(`${dryRun ? planPrefix : ''}${summaryLine(reports, 'no message matched', missing, 'message(s)')}`);
  }
  return failed > 0 || refused > 0 || missing > 0 || truncated.length > 0 ? 1 : 0;
}

/** One message's line of a resubmit or purge report. */
export function deadLetterReportLine(r: ActionReport): string {
  const copy = r.copyMessageId ? ` -> ${shellWord(r.copyMessageId)}` : '';
  return `${String(r.sequenceNumber).padStart(6)}  ${r.messageId === undefined ? '(no MessageId)' : shellWord(r.messageId)}${copy}  ${r.outcome}  ${oneLine(r.detail)}`;
}

export function deadLetterTable(rows: ListedMessage[]): string {
  const header = `${'SEQ'.padStart(6)}  ${cut('MESSAGE ID', 24)}  ${cut('DEDUP KEY', 24)}  ${cut('REASON', 26)}  ${cut('DESCRIPTION', 30)}  DLV  ${cut('ENQUEUED', 20)}  STORE`;
  const lines = rows.map(
    (r) =>
      `${String(r.sequenceNumber).padStart(6)}  ${idCell(r.messageId, 24)}  ${idCell(r.dedupKey, 24)}  ${cut(r.deadLetterReason, 26)}  ${cut(r.deadLetterErrorDescription, 30)}  ${String(r.deliveryCount ?? '').padStart(3)}  ${cut(r.enqueuedTimeUtc?.slice(0, 19), 20)}  ${oneLine(`${r.store.kind}: ${r.store.detail}`)}`,
  );
  return [header, ...lines, `${rows.length} dead-lettered message(s)`].join('\n');
}
