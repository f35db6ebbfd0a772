import type { DlqContext } from './dlqCommands.js';
import { maxMessagesLookedAt } from './sameKeyMessages.js';
import { editAndResubmit, editInEditor, readEditedBody } from './editResubmit.js';
import type { EditReport } from './editResubmit.js';
import { oneLine, shellWord } from './terminalText.js';

/** `resubmit <target> --edit | --body-file <file>`: one message, its report, the exit code. */
export async function runEditResubmit(
  ctx: DlqContext,
  targets: readonly string[],
  options: { edit?: boolean; bodyFile?: string; json?: boolean; all?: boolean; dryRun?: boolean },
  io: { stdout(text: string): void; env: Readonly<Record<string, string | undefined>> },
): Promise<number> {
  if (targets.length !== 1 || options.all) throw new Error('--edit and --body-file take exactly one message, by sequence number or MessageId');
  if (options.edit && options.bodyFile !== undefined) throw new Error('give --edit or --body-file, not both');
  const target = targets[0] as string;
  const edit = options.bodyFile !== undefined ? () => readEditedBody(options.bodyFile as string) : (body: unknown) => editInEditor(body, io.env);
  const report = await editAndResubmit(ctx, target, edit, options.dryRun === true);
  if (!report) {
    io.stdout(
      options.json
        ? JSON.stringify({ reports: [], missing: 1 }, null, 2)
        : `no dead-lettered message has sequence number or MessageId ${shellWord(target)} (among the first ${maxMessagesLookedAt} in sequence order)`,
    );
    return 1;
  }
  io.stdout(options.json ? JSON.stringify({ reports: [report] }, null, 2) : editReportLine(report));
  return report.outcome === 'resubmitted' || report.outcome === 'would-resubmit' ? 0 : 1;
}

/** The line of an edit's report. */
export function editReportLine(report: EditReport): string {
  return `${String(report.sequenceNumber).padStart(6)}  ${report.messageId === undefined ? '(no MessageId)' : shellWord(report.messageId)}${report.copyMessageId ? ` -> ${shellWord(report.copyMessageId)}` : ''}  ${report.outcome}  ${oneLine(report.detail)}`;
}
