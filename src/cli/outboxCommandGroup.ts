import { Option } from 'commander';
import type { Command } from 'commander';
import { bulkFilterOf, bulkStopWords, planPrefix, plansOnly, withBulkOptions } from './bulkCommands.js';
import type { BulkOptions } from './bulkCommands.js';
import type { CommandContexts } from './commandContexts.js';
import type { DlqIo } from './dlqIo.js';
import { defaultListMax, listMaxOption, listStopWords } from './listBound.js';
import { listOutbox, requeueOutbox } from './outboxCommands.js';
import { defaultScanMax, scanStops } from './scanBound.js';
import type { ListedOutboxEntry, OutboxActionReport } from './outboxCommands.js';
import { summaryLine } from './summaryLine.js';
import { cut, idCell } from './tableCell.js';
import { oneLine, shellWord } from './terminalText.js';

const outboxStates = ['pending', 'published', 'failed'] as const;

/** `dlq outbox ...`: events the publisher could not send (a missing topic, a message too large), kept in Cosmos DB. */
export function addOutboxCommands(program: Command, io: DlqIo, setExitCode: (code: number) => void, contexts: CommandContexts): void {
  const outbox = program
    .command('outbox')
    .description('outbox entries the publisher set aside (failed: MessagingEntityNotFound, MessageSizeExceeded) or has yet to send');
  outbox
    .command('list')
    .description('failed entries (or those in --state), oldest first')
    .option('--order <orderId>', "only this order's entries")
    .addOption(new Option('--state <state...>', 'these states instead of failed').choices(outboxStates))
    .addOption(listMaxOption('entries, the oldest (the store is asked for no more)'))
    .option('--json', 'print JSON for scripts')
    .action(async (options: { order?: string; state?: string[]; max?: number; json?: boolean }) => {
      const { truncated, stopped } = scanStops(io.stderr, ...listStopWords);
      await contexts.store(false, async (ctx) => {
        const states = (options.state ?? ['failed']) as (typeof outboxStates)[number][];
        const rows = await listOutbox(ctx, states, options.order, { max: options.max ?? defaultListMax, scanMax: defaultScanMax, stopped });
        io.stdout(options.json ? JSON.stringify({ entries: rows, truncated }, null, 2) : outboxTable(rows));
      });
      setExitCode(truncated.length > 0 ? 1 : 0);
    });
  withBulkOptions(
    outbox
      .command('requeue [targets...]')
      .description(
        'put failed entries (by MessageId or <orderId>/<id>) back to pending once the cause is fixed: the publisher sends them again; a bulk run shows its plan unless --yes',
      )
      .option('--all', 'every failed entry'),
    'entries',
  )
    .option('--json', 'print the report as JSON')
    .action(async (targets: string[], options: BulkOptions & { json?: boolean }) => {
      const filtered = options.group !== undefined || options.since !== undefined || options.until !== undefined;
      if (targets.length === 0 && !options.all && !filtered)
        throw new Error('name outbox entries by MessageId or <orderId>/<id>, or use --all, --group, --since or --until');
      const dryRun = plansOnly('outbox requeue', targets, options);
      const { truncated, stopped } = scanStops(io.stderr, ...bulkStopWords);
      await contexts.store(false, async (ctx) => {
        const all = options.all === true || targets.length === 0;
        const reports = await requeueOutbox(ctx, targets, all, dryRun, bulkFilterOf(options), { scanMax: options.scanMax ?? defaultScanMax, stopped });
        const missing = targets.filter((t) => !reports.some((r) => r.messageId === t || `${r.orderId}/${r.id}` === t)).length;
        const failed = reports.filter((r) => r.outcome === 'failed').length;
        if (options.json) io.stdout(JSON.stringify({ dryRun, reports, failed, missing, truncated }, null, 2));
        else {
          for (const r of reports) io.stdout(outboxReportLine(r));
          io.stdout(`${dryRun ? planPrefix : ''}${summaryLine(reports, 'no failed outbox entry matched', missing, 'entry(ies)')}`);
        }
        setExitCode(failed > 0 || missing > 0 || truncated.length > 0 ? 1 : 0);
      });
    });
}

/** One entry's line of a requeue report. */
export function outboxReportLine(r: OutboxActionReport): string {
  return `${shellWord(`${r.orderId}/${r.id}`)}  ${shellWord(r.messageId)}  ${r.outcome}  ${oneLine(r.detail)}`;
}

export function outboxTable(rows: ListedOutboxEntry[]): string {
  const header = `${cut('ORDER', 24)}  ${cut('EVENT', 16)}  ${cut('DESTINATION', 16)}  ${cut('MESSAGE ID', 40)}  ${cut('STATE', 9)}  ${cut('CREATED', 20)}  REASON`;
  const lines = rows.map(
    (r) =>
      `${cut(r.orderId, 24)}  ${cut(r.eventType, 16)}  ${cut(r.destination, 16)}  ${idCell(r.messageId, 40)}  ${cut(r.state, 9)}  ${cut(r.createdAt.slice(0, 19), 20)}  ${r.reason ? oneLine(`${r.reason}: ${r.detail ?? ''}`) : ''}`,
  );
  return [header, ...lines, `${rows.length} outbox entry(ies)`].join('\n');
}
