import { createInterface } from 'node:readline/promises';
import { DefaultAzureCredential } from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import { ServiceBusClient } from '@azure/service-bus';
import type { RetryOptions } from '@azure/service-bus';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { loadResubmitRetention } from '../config.js';
import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import { readSubscriptionRoute } from './copyDelivery.js';
import { deadLetterReceiver, entityPath } from './deadLetterQueue.js';
import type { EntityAddress } from './deadLetterQueue.js';
import { isEmptySelection, parseDuration } from './deadLetterSelection.js';
import type { Selection } from './deadLetterSelection.js';
import { listDeadLetters, purgeDeadLetters, resubmitDeadLetters, showDeadLetter } from './dlqCommands.js';
import { listOutbox, requeueOutbox } from './outboxCommands.js';
import { addDoctorCommand } from './doctorCommand.js';
import { addAuditCommand } from './auditCommands.js';
import { addGroupsCommands, queueFileEntities } from './groupsCommands.js';
import { addTraceCommand } from './traceCommand.js';
import { commandPath, registerOperatorActions } from './operatorActionLog.js';
import type { OperatorActionIo } from './operatorActionLog.js';
import { openPurgeExport } from './purgeExport.js';
import { runEditResubmit } from './editResubmitCommand.js';
import { addShipmentCommands } from './shipmentCommands.js';
import { cut, idCell } from './tableCell.js';
import { escapeControls, shellWord } from './terminalText.js';
import type { ListedOutboxEntry } from './outboxCommands.js';
import { discardParked, listParked, resubmitParked } from './parkedCommands.js';
import type { ListedParkedItem, ParkedActionReport, ParkedContext, ParkedSelection } from './parkedCommands.js';
import { bulkCommandPaths, bulkFilterOf, plansOnly, planPrefix, resolveBulkWindow, withBulkOptions } from './bulkCommands.js';
import type { BulkOptions } from './bulkCommands.js';
import { checkCosmosContainer, checkServiceBusEntity } from './setupChecks.js';
import { whereLine } from './whereLine.js';
import type { ActionReport, DlqContext, ListedMessage, Output, ResubmitHooks } from './dlqCommands.js';
import type { ResubmitPolicy } from './resubmitHorizon.js';

export interface DlqIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Answers a yes/no question; undefined when nobody can answer (no terminal). */
  readonly confirm?: (question: string) => Promise<boolean>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly hooks?: ResubmitHooks;
  /** The tool's clock; tests move it forward. */
  readonly now?: () => number;
  /**
   * Where the first line of every run goes (which namespace, entity and account): the bin sends it to
   * stderr, so `--json` output stays clean; tests that compare stderr leave it out.
   */
  readonly announce?: (line: string) => void;
  /** The Entra ID credential for Cosmos DB without a key; DefaultAzureCredential unless given (tests give a scoped principal's). */
  readonly cosmosCredential?: TokenCredential;
  /** Where operator-action records go and who acts (tests); by default the orders container and the credential. */
  readonly actions?: OperatorActionIo;
}

/** The commands that read every entity of the queue file: their first line names them all. */
const acrossEntities: ReadonlySet<string> = new Set(['groups list', 'groups retry', 'trace']);

interface GlobalOptions {
  connectionString?: string;
  namespace?: string;
  queue?: string;
  topic?: string;
  subscription?: string;
  cosmosEndpoint?: string;
  cosmosKey?: string;
  cosmosDatabase: string;
  cosmosContainer: string;
  consumerName?: string;
  duplicateWindow: number;
  timeout: number;
}

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

/** Exit codes: 0 done, 1 some message failed (or nothing matched a named target), 2 bad usage or connection. */
export async function runDlqCli(argv: readonly string[], rawIo: DlqIo): Promise<number> {
  // Whatever a command prints, no sender-chosen character reaches the terminal as a control.
  const io: DlqIo = { ...rawIo, stdout: (t) => rawIo.stdout(escapeControls(t)), stderr: (t) => rawIo.stderr(escapeControls(t)) };
  let exitCode = 0;
  const program = dlqProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    io.stderr(`error: ${describeError(error)}`);
    return 2;
  }
  return exitCode;
}

export function dlqProgram(io: DlqIo, reportExitCode: (code: number) => void): Command {
  let exitCode = 0;
  const setExitCode = (code: number) => {
    exitCode = code;
    reportExitCode(code);
  };
  const program = new Command('orders-ops')
    .description('The operator tool (also orders-dlq): inspect, resubmit and purge dead-lettered messages of the orders queue or a topic subscription, parked items, outbox entries and escalated shipments.')
    .configureOutput({ writeOut: (t) => io.stdout(t.trimEnd()), writeErr: (t) => io.stderr(t.trimEnd()) })
    .exitOverride()
    .addOption(new Option('--connection-string <cs>', 'Service Bus connection string (emulator, local)').default(io.env.SERVICEBUS_CONNECTION_STRING, 'SERVICEBUS_CONNECTION_STRING'))
    .addOption(new Option('--namespace <fqdn>', 'namespace, e.g. sb-x.servicebus.windows.net, with DefaultAzureCredential (production); without it and without a connection string, SERVICEBUS_FULLY_QUALIFIED_NAMESPACE (azd env get-values)'))
    .addOption(new Option('--queue <name>', 'the queue whose dead letters to handle').default(io.env.ORDERS_QUEUE_NAME ?? 'orders'))
    .option('--topic <name>', 'a topic, with --subscription, instead of a queue')
    .option('--subscription <name>', 'the topic subscription')
    .addOption(new Option('--cosmos-endpoint <url>', 'Cosmos DB account, to show what the store knows of each message').default(io.env.COSMOS_ENDPOINT))
    .addOption(new Option('--cosmos-key <key>', 'Cosmos DB key; without it, DefaultAzureCredential').default(io.env.COSMOS_KEY, 'COSMOS_KEY'))
    .option('--cosmos-database <name>', 'database', io.env.COSMOS_DATABASE ?? 'orders')
    .option('--cosmos-container <name>', 'orders container', io.env.COSMOS_ORDERS_CONTAINER ?? 'orders')
    .option('--consumer-name <name>', "the consumer's CONSUMER_NAME; with --subscription the subscription's name (the fulfilment consumer's), else CONSUMER_NAME")
    .addOption(new Option('--duplicate-window <duration>', "the queue's duplicate-detection window (0s if it has none)").argParser(durationOption).default(600_000, '10m'))
    .addOption(new Option('--timeout <duration>', 'how long to wait for Service Bus or Cosmos DB to answer before giving up with the reason').argParser(durationOption).default(10_000, '10s'))
    .hook('preAction', (_root, action) => {
      const options = program.opts<GlobalOptions>();
      // azd's output names the namespace; a connection string given or in the environment wins.
      if (!options.namespace && !options.connectionString && io.env.SERVICEBUS_FULLY_QUALIFIED_NAMESPACE) program.setOptionValue('namespace', io.env.SERVICEBUS_FULLY_QUALIFIED_NAMESPACE);
      // The fulfilment consumer's name is its subscription's; CONSUMER_NAME is the orders consumer's.
      if (options.consumerName === undefined) program.setOptionValue('consumerName', options.subscription ?? io.env.CONSUMER_NAME);
      const address = options.topic && options.subscription ? { topic: options.topic, subscription: options.subscription } : { queue: options.queue };
      // groups and trace read every dead-letter queue of the queue file, not the one entity the options name.
      const entities = acrossEntities.has(commandPath(action)) ? queueFileEntities(options.queue, io.env) : undefined;
      io.announce?.(whereLine({ ...program.opts<GlobalOptions>(), address, entities }));
    })
    .addHelpText('after', exitCodesHelp);

  const withFilters = (command: Command) =>
    command
      .option('--reason <reason>', 'only messages with this DeadLetterReason')
      .option('--older-than <duration>', 'only messages enqueued longer ago than this (e.g. 2h)', durationOption)
      .option('--newer-than <duration>', 'only messages enqueued more recently than this (e.g. 30m)', durationOption)
      .option('--body-contains <text>', 'only messages whose body contains this text');

  withFilters(program.command('list').description('one row per dead-lettered message, with what the store knows of it'))
    .option('--json', 'print JSON for scripts')
    .action(async (options: FilterOptions) => {
      await withContext(program.opts<GlobalOptions>(), io, async (ctx) => {
        const rows = await listDeadLetters(ctx, selectionOf([], { ...options, all: true }));
        io.stdout(options.json ? JSON.stringify(rows, null, 2) : table(rows));
      });
    });

  program
    .command('show <sequenceNumberOrMessageId>')
    .description('every property and the body of one dead-lettered message, as JSON')
    .option('--json', 'print JSON (show always does; accepted as on every other listing)')
    .action(async (target: string) => {
      await withContext(program.opts<GlobalOptions>(), io, async (ctx) => {
        const shown = await showDeadLetter(ctx, target);
        if (!shown) {
          io.stderr(`no dead-lettered message has sequence number or MessageId ${shellWord(target)}`);
          setExitCode(1);
          return;
        }
        io.stdout(JSON.stringify(shown, null, 2));
      });
    });

  withBulkOptions(withFilters(program.command('resubmit [targets...]').description('send copies back to the queue, then remove the originals; a bulk run (--all, a filter, more than one target) shows its plan unless --yes'))
    .option('--all', 'every message that passes the filters'), 'messages')
    .option('--force <reason>', forceHelp('dead-lettered message'))
    .option('--json', 'print the report as JSON')
    .option('--edit', 'one message: edit its body in $EDITOR, then send it under <key>~edit-<n> (edited-from: <key>); refused if the original\'s effect is applied')
    .option('--body-file <file>', 'as --edit, with the body from this JSON file')
    .action(async (targets: string[], options: FilterOptions) => {
      if (options.edit || options.bodyFile !== undefined) {
        await withContext(program.opts<GlobalOptions>(), io, async (ctx) => setExitCode(await runEditResubmit(ctx, targets, options, io)));
        return;
      }
      const selection = requireSelection(targets, options);
      const policy = resubmitPolicyOf(io, options.force);
      const dryRun = plansOnly('resubmit', targets, options);
      await withContext(program.opts<GlobalOptions>(), io, async (ctx) => {
        const reports = await resubmitDeadLetters(ctx, selection, dryRun, policy, io.hooks);
        setExitCode(report(io, reports, selection, options.json === true, dryRun));
      });
    });

  withBulkOptions(withFilters(program.command('purge [targets...]').description('remove dead-lettered messages for good; a bulk run (--all, a filter, more than one target) shows its plan unless --yes, one named message asks first'))
    .option('--all', 'every message that passes the filters')
    .option('--yes', 'act without asking (a bulk run: act, not only show the plan)'), 'messages')
    .option('--json', 'print the report as JSON')
    .option('--export <file>', 'write what is removed to this JSON-lines file first (default: purge-<entity>-<time>.jsonl here)')
    .option('--no-export', 'remove without keeping a copy (needs --why)')
    .action(async (targets: string[], options: FilterOptions) => {
      const selection = requireSelection(targets, options);
      const dryRun = plansOnly('purge', targets, options);
      await withContext(program.opts<GlobalOptions>(), io, async (ctx) => {
        if (!dryRun && !options.yes) {
          const planned = await purgeDeadLetters(ctx, selection, true);
          const question = `Purge ${planned.length} dead-lettered message(s) from ${ctx.entityPath}? They cannot be recovered. [y/N] `;
          if (!io.confirm) throw new Error(`refusing to purge ${planned.length} message(s) without --yes (no terminal to ask)`);
          if (!(await io.confirm(question))) {
            io.stderr('nothing purged');
            return;
          }
        }
        const exported = typeof options.export === 'string' && !dryRun ? await openPurgeExport(options.export) : undefined;
        const reports = await purgeDeadLetters(ctx, selection, dryRun, exported?.write).finally(() => exported?.close());
        if (exported) io.stderr(`exported ${exported.count()} message(s) to ${exported.path}`);
        setExitCode(report(io, reports, selection, options.json === true, dryRun));
      });
    });
  addParkedCommands(program, io, setExitCode);
  addOutboxCommands(program, io, setExitCode);
  addShipmentCommands(program, io, setExitCode, (run) => withStoreContext(program.opts<GlobalOptions>(), io, false, run));
  addDoctorCommand(program, io, setExitCode);
  addAuditCommand(program, io, (run) => withStoreContext(program.opts<GlobalOptions>(), io, false, run));
  addGroupsCommands(program, io, setExitCode, () => {
    const opts = program.opts<GlobalOptions>();
    return {
      deadLetterEntities: () => queueFileEntities(opts.queue, io.env),
      deadLetters: (address, run) => withContext({ ...opts, queue: address.queue, topic: address.topic, subscription: address.subscription }, io, run),
      store: opts.cosmosEndpoint ? (needsQueue, run) => withStoreContext(opts, io, needsQueue, run) : undefined,
      policy: () => resubmitPolicyOf(io, undefined),
      hooks: io.hooks,
    };
  });
  addTraceCommand(program, io, setExitCode, () => {
    const opts = program.opts<GlobalOptions>();
    return {
      entities: () => queueFileEntities(opts.queue, io.env),
      serviceBus: opts.connectionString || opts.namespace ? () => serviceBusClientOf(opts, { timeoutInMs: opts.timeout, maxRetries: 3 }) : undefined,
      store: opts.cosmosEndpoint ? (run) => withStoreContext(opts, io, false, run) : undefined,
      env: io.env,
    };
  });
  // Before the record is written: `--since 2h` becomes the instant it meant, in the record and for the command alike.
  program.hook('preAction', (_root, action) => {
    if (bulkCommandPaths.has(commandPath(action))) resolveBulkWindow(action, (io.now ?? Date.now)());
  });
  registerOperatorActions(program, io, () => exitCode);
  return program;
}

interface ParkedOptions extends BulkOptions {
  order?: string;
  reason?: string;
  state?: string[];
  json?: boolean;
  force?: string;
}

const parkedStates = ['parked', 'applied', 'rejected', 'resubmitted', 'discarded'] as const;

/** `dlq parked ...`: early arrivals that could not be applied, kept in Cosmos DB rather than the dead-letter queue. */
function addParkedCommands(program: Command, io: DlqIo, setExitCode: (code: number) => void): void {
  const parked = program
    .command('parked')
    .description('payments and status changes that came before their order and could not be applied (OrderNeverArrived, CurrencyMismatch, PayloadConflict)');
  parked
    .command('list')
    .description('rejected parked items (or those in --state), oldest first')
    .option('--order <orderId>', 'only this order\'s items')
    .option('--reason <reason>', 'only items rejected with this reason')
    .addOption(new Option('--state <state...>', 'these states instead of rejected').choices(parkedStates))
    .option('--json', 'print JSON for scripts')
    .action(async (options: ParkedOptions) => {
      await withStoreContext(program.opts<GlobalOptions>(), io, false, async (ctx) => {
        const states = (options.state ?? ['rejected']) as (typeof parkedStates)[number][];
        const rows = await listParked(ctx, states, { orderId: options.order, reason: options.reason });
        io.stdout(options.json ? JSON.stringify(rows, null, 2) : parkedTable(rows));
      });
    });
  const selected = (command: Command) =>
    withBulkOptions(
      command
        .option('--all', 'every rejected item that passes the filters')
        .option('--order <orderId>', 'only this order\'s items')
        .option('--reason <reason>', 'only items rejected with this reason'),
      'items',
    ).option('--json', 'print the report as JSON');
  selected(parked.command('resubmit [targets...]').description('send rejected items back to the orders queue (by MessageId, dedup key or <orderId>/<item id>); a bulk run shows its plan unless --yes'))
    .option('--force <reason>', forceHelp('parked item'))
    .action(async (targets: string[], options: ParkedOptions) => {
      const selection = parkedSelection(targets, options);
      const policy = resubmitPolicyOf(io, options.force);
      const dryRun = plansOnly('parked resubmit', targets, options);
      await withStoreContext(program.opts<GlobalOptions>(), io, true, async (ctx) => {
        setExitCode(parkedReport(io, await resubmitParked(ctx, selection, dryRun, policy), selection, options.json === true, dryRun));
      });
    });
  selected(
    parked
      .command('discard [targets...]')
      .description('drop rejected items for good: their effect will never be applied; a bulk run shows its plan unless --yes, one named item asks first')
      .option('--yes', 'act without asking (a bulk run: act, not only show the plan)'),
  ).action(async (targets: string[], options: ParkedOptions) => {
      const selection = parkedSelection(targets, options);
      const dryRun = plansOnly('parked discard', targets, options);
      await withStoreContext(program.opts<GlobalOptions>(), io, false, async (ctx) => {
        if (!dryRun && !options.yes) {
          const planned = await discardParked(ctx, selection, true);
          if (!io.confirm) throw new Error(`refusing to discard ${planned.length} parked item(s) without --yes (no terminal to ask)`);
          if (!(await io.confirm(`Discard ${planned.length} parked item(s)? Their effect will never be applied. [y/N] `))) {
            io.stderr('nothing discarded');
            return;
          }
        }
        setExitCode(parkedReport(io, await discardParked(ctx, selection, dryRun), selection, options.json === true, dryRun));
      });
    });
}

const outboxStates = ['pending', 'published', 'failed'] as const;

/** `dlq outbox ...`: events the publisher could not send (a missing topic, a message too large), kept in Cosmos DB. */
function addOutboxCommands(program: Command, io: DlqIo, setExitCode: (code: number) => void): void {
  const outbox = program.command('outbox').description('outbox entries the publisher set aside (failed: MessagingEntityNotFound, MessageSizeExceeded) or has yet to send');
  outbox
    .command('list')
    .description('failed entries (or those in --state), oldest first')
    .option('--order <orderId>', "only this order's entries")
    .addOption(new Option('--state <state...>', 'these states instead of failed').choices(outboxStates))
    .option('--json', 'print JSON for scripts')
    .action(async (options: { order?: string; state?: string[]; json?: boolean }) => {
      await withStoreContext(program.opts<GlobalOptions>(), io, false, async (ctx) => {
        const rows = await listOutbox(ctx, (options.state ?? ['failed']) as (typeof outboxStates)[number][], options.order);
        io.stdout(options.json ? JSON.stringify(rows, null, 2) : outboxTable(rows));
      });
    });
  withBulkOptions(
    outbox
      .command('requeue [targets...]')
      .description('put failed entries (by MessageId or <orderId>/<id>) back to pending once the cause is fixed: the publisher sends them again; a bulk run shows its plan unless --yes')
      .option('--all', 'every failed entry'),
    'entries',
  )
    .option('--json', 'print the report as JSON')
    .action(async (targets: string[], options: BulkOptions & { json?: boolean }) => {
      const filtered = options.group !== undefined || options.since !== undefined || options.until !== undefined;
      if (targets.length === 0 && !options.all && !filtered) throw new Error('name outbox entries by MessageId or <orderId>/<id>, or use --all, --group, --since or --until');
      const dryRun = plansOnly('outbox requeue', targets, options);
      await withStoreContext(program.opts<GlobalOptions>(), io, false, async (ctx) => {
        const reports = await requeueOutbox(ctx, targets, options.all === true || targets.length === 0, dryRun, bulkFilterOf(options));
        const missing = targets.filter((t) => !reports.some((r) => r.messageId === t || `${r.orderId}/${r.id}` === t)).length;
        const failed = reports.filter((r) => r.outcome === 'failed').length;
        if (options.json) io.stdout(JSON.stringify({ dryRun, reports, failed, missing }, null, 2));
        else {
          for (const r of reports) io.stdout(`${shellWord(`${r.orderId}/${r.id}`)}  ${shellWord(r.messageId)}  ${r.outcome}  ${r.detail}`);
          io.stdout(`${dryRun ? planPrefix : ''}${summaryLine(reports, 'no failed outbox entry matched', missing, 'entry(ies)')}`);
        }
        setExitCode(failed > 0 || missing > 0 ? 1 : 0);
      });
    });
}

function outboxTable(rows: ListedOutboxEntry[]): string {
  const header = `${cut('ORDER', 24)}  ${cut('EVENT', 16)}  ${cut('DESTINATION', 16)}  ${cut('MESSAGE ID', 40)}  ${cut('STATE', 9)}  ${cut('CREATED', 20)}  REASON`;
  const lines = rows.map(
    (r) =>
      `${cut(r.orderId, 24)}  ${cut(r.eventType, 16)}  ${cut(r.destination, 16)}  ${idCell(r.messageId, 40)}  ${cut(r.state, 9)}  ${cut(r.createdAt.slice(0, 19), 20)}  ${r.reason ? `${r.reason}: ${r.detail ?? ''}` : ''}`,
  );
  return [header, ...lines, `${rows.length} outbox entry(ies)`].join('\n');
}

function parkedSelection(targets: string[], options: ParkedOptions): ParkedSelection {
  if (targets.length === 0 && !options.all && options.reason === undefined && options.order === undefined && options.group === undefined && options.since === undefined && options.until === undefined) {
    throw new Error('name parked items by MessageId, dedup key or <orderId>/<item id>, or use --all, --order, --reason, --group, --since or --until');
  }
  return { targets, all: options.all === true || targets.length === 0, reason: options.reason, orderId: options.order, bulk: bulkFilterOf(options) };
}

/** The orders container (and, to resubmit, the queue) for the commands whose records live in Cosmos DB: parked items, outbox entries, shipments. */
async function withStoreContext(options: GlobalOptions, io: DlqIo, needsQueue: boolean, run: (ctx: ParkedContext) => Promise<void>): Promise<void> {
  if (!options.cosmosEndpoint) throw new Error('parked items, outbox entries and shipment records live in Cosmos DB: give --cosmos-endpoint (or COSMOS_ENDPOINT)');
  const cosmos = createCosmosClient({ endpoint: options.cosmosEndpoint, key: options.cosmosKey, credential: io.cosmosCredential });
  const container = cosmos.database(options.cosmosDatabase).container(options.cosmosContainer);
  const client = needsQueue ? serviceBusClientOf(options, { timeoutInMs: options.timeout, maxRetries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 2_000 }) : undefined;
  try {
    await checkCosmosContainer({ container, endpoint: options.cosmosEndpoint, timeoutMs: options.timeout });
    if (client) {
      const probe = serviceBusClientOf(options, { timeoutInMs: options.timeout, maxRetries: 0 });
      await checkServiceBusEntity({ client: probe, address: { queue: options.queue }, namespace: namespaceOf(options), timeoutMs: options.timeout }).finally(() => probe.close());
    }
    await run({
      store: new CosmosDocumentStore(container),
      sender: () => {
        if (!client) throw new Error('no Service Bus connection');
        return client.createSender(options.queue ?? 'orders');
      },
      consumerName: options.consumerName,
      keepSeconds: Number(io.env.INBOX_MARKER_TTL_SECONDS ?? 30 * 24 * 3600),
      now: io.now ?? (() => Date.now()),
      out: { line: io.stdout, progress: io.stderr },
    });
  } finally {
    await client?.close();
    cosmos.dispose();
  }
}

function parkedReport(io: DlqIo, reports: ParkedActionReport[], selection: ParkedSelection, json: boolean, dryRun: boolean): number {
  // A refused item is not done: the exit code says so, as for a failure.
  const failed = reports.filter((r) => r.outcome === 'failed' || r.outcome === 'refused').length;
  const matched = (t: string) => reports.some((r) => r.messageId === t || r.dedupKey === t || `${r.orderId}/${r.id}` === t);
  const missing = selection.targets.filter((t) => !matched(t)).length;
  if (json) {
    io.stdout(JSON.stringify({ dryRun, reports, failed, missing }, null, 2));
  } else {
    for (const r of reports) io.stdout(`${shellWord(`${r.orderId}/${r.id}`)}  ${r.messageId === undefined ? '' : shellWord(r.messageId)}${r.copyMessageId ? ` -> ${shellWord(r.copyMessageId)}` : ''}  ${r.outcome}  ${r.detail}`);
    io.stdout(`${dryRun ? planPrefix : ''}${summaryLine(reports, 'no parked item matched', missing, 'item(s)')}`);
  }
  return failed > 0 || missing > 0 ? 1 : 0;
}

/** The closing line of a report: each outcome with its count, and the named targets not found. */
function summaryLine(reports: readonly { readonly outcome: string }[], nothing: string, missing: number, missingNoun: string): string {
  const counts = Object.entries(reports.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.outcome]: (acc[r.outcome] ?? 0) + 1 }), {}));
  return `${counts.map(([k, v]) => `${k} ${v}`).join(', ') || nothing}${missing > 0 ? `; ${missing} named ${missingNoun} not found` : ''}`;
}

function parkedTable(rows: ListedParkedItem[]): string {
  const header = `${cut('ORDER', 24)}  ${cut('TYPE', 18)}  ${cut('MESSAGE ID', 24)}  ${cut('STATE', 11)}  ${cut('REASON', 18)}  ${cut('PARKED', 20)}  DESCRIPTION`;
  const lines = rows.map(
    (r) => `${cut(r.orderId, 24)}  ${cut(r.messageType, 18)}  ${idCell(r.messageId, 24)}  ${cut(r.state, 11)}  ${cut(r.reason, 18)}  ${cut(r.parkedAt.slice(0, 19), 20)}  ${r.description ?? ''}`,
  );
  return [header, ...lines, `${rows.length} parked item(s)`].join('\n');
}

const forceHelp = (what: string) =>
  `send even a ${what} whose inbox markers may have expired (older than INBOX_MARKER_TTL_SECONDS less the margin a copy needs); the reason is recorded on the copy (${'resubmit-forced-reason'}) and in the report`;

/** The retention settings as the app reads them (same names, defaults and checks), and a forced send's reason. */
function resubmitPolicyOf(io: DlqIo, force: string | undefined): ResubmitPolicy {
  if (force !== undefined && (force.trim() === '' || force.length > 500)) throw new Error('--force needs a reason of 1 to 500 characters: why the copy is safe to send (it is recorded on the copy)');
  return { retention: loadResubmitRetention(io.env), forceReason: force?.trim() };
}

function durationOption(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
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
  if (isEmptySelection(selection)) throw new Error('name messages by sequence number or MessageId, or use --all or a filter (--reason, --older-than, --newer-than, --body-contains, --group, --since, --until)');
  return selection;
}

const exitCodesHelp = `
Exit codes:
  0  done
  1  a message failed, or a named message was not found
  2  bad usage, or Service Bus or Cosmos DB could not be used (a missing entity, database or
     container, a refused credential, no answer within --timeout): the message names which`;

async function withContext(options: GlobalOptions, io: DlqIo, run: (ctx: DlqContext) => Promise<void>): Promise<void> {
  const address = entityOf(options);
  // The SDK's own retries stay inside --timeout, so no single call hangs for a minute.
  const client = serviceBusClientOf(options, { timeoutInMs: options.timeout, maxRetries: 3, retryDelayInMs: 500, maxRetryDelayInMs: 2_000 });
  const probe = serviceBusClientOf(options, { timeoutInMs: options.timeout, maxRetries: 0 });
  const cosmos = options.cosmosEndpoint ? createCosmosClient({ endpoint: options.cosmosEndpoint, key: options.cosmosKey, credential: io.cosmosCredential }) : undefined;
  const container = cosmos?.database(options.cosmosDatabase).container(options.cosmosContainer);
  const receiver = deadLetterReceiver(client, address);
  const out: Output = { line: io.stdout, progress: io.stderr };
  try {
    await checkServiceBusEntity({ client: probe, address, namespace: namespaceOf(options), timeoutMs: options.timeout }).finally(() => probe.close());
    if (container && options.cosmosEndpoint) await checkCosmosContainer({ container, endpoint: options.cosmosEndpoint, timeoutMs: options.timeout });
    await run({
      receiver,
      sender: () => client.createSender(address.queue ?? address.topic ?? ''),
      entityPath: entityPath(address),
      resubmitTo: address.subscription,
      route: address.topic && address.subscription ? await readSubscriptionRoute(client, address.topic, address.subscription) : undefined,
      store: container && new CosmosDocumentStore(container),
      consumerName: options.consumerName,
      duplicateDetectionWindowMs: options.duplicateWindow,
      now: io.now ?? (() => Date.now()),
      out,
    });
  } finally {
    await receiver.close();
    await client.close();
    cosmos?.dispose();
  }
}

function entityOf(options: GlobalOptions): EntityAddress {
  if (options.topic || options.subscription) {
    if (!options.topic || !options.subscription) throw new Error('--topic and --subscription go together');
    return { topic: options.topic, subscription: options.subscription };
  }
  return { queue: options.queue };
}

function serviceBusClientOf(options: GlobalOptions, retryOptions: RetryOptions): ServiceBusClient {
  if (options.connectionString && options.namespace) throw new Error('give --connection-string or --namespace, not both');
  if (options.connectionString) return new ServiceBusClient(options.connectionString, { retryOptions });
  if (options.namespace) return new ServiceBusClient(options.namespace, new DefaultAzureCredential(), { retryOptions });
  throw new Error('give --namespace <fqdn> (with az login / managed identity) or --connection-string (or SERVICEBUS_CONNECTION_STRING)');
}

/** How the namespace was named, for error messages: `--namespace`, or the connection string's Endpoint. */
function namespaceOf(options: GlobalOptions): string {
  if (options.namespace) return options.namespace;
  return /Endpoint=sb:\/\/([^;/]+)/i.exec(options.connectionString ?? '')?.[1] ?? '(from the connection string)';
}

/** Never an empty "error: ": an SDK error without a message still has a code or a name. */
function describeError(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown; name?: unknown } | undefined;
  const text = String(e?.message ?? '').trim();
  if (text) return text;
  return [e?.name, e?.code].filter((x) => x !== undefined && String(x) !== '').join(' ') || String(error);
}

/** Prints the per-message report and a summary; returns the exit code. */
function report(io: DlqIo, reports: ActionReport[], selection: Selection, json: boolean, dryRun: boolean): number {
  const failed = reports.filter((r) => r.outcome === 'failed').length;
  const refused = reports.filter((r) => r.outcome === 'refused').length;
  const missing = !selection.all && selection.targets.length > 0 ? selection.targets.length - reports.length : 0;
  if (json) {
    io.stdout(JSON.stringify({ dryRun, reports, failed, refused, missing }, null, 2));
  } else {
    for (const r of reports) {
      const copy = r.copyMessageId ? ` -> ${shellWord(r.copyMessageId)}` : '';
      io.stdout(`${String(r.sequenceNumber).padStart(6)}  ${r.messageId === undefined ? '(no MessageId)' : shellWord(r.messageId)}${copy}  ${r.outcome}  ${r.detail}`);
    }
    io.stdout(`${dryRun ? planPrefix : ''}${summaryLine(reports, 'no message matched', missing, 'message(s)')}`);
  }
  return failed > 0 || refused > 0 || missing > 0 ? 1 : 0;
}

function table(rows: ListedMessage[]): string {
  const header = `${'SEQ'.padStart(6)}  ${cut('MESSAGE ID', 24)}  ${cut('DEDUP KEY', 24)}  ${cut('REASON', 26)}  ${cut('DESCRIPTION', 30)}  DLV  ${cut('ENQUEUED', 20)}  STORE`;
  const lines = rows.map(
    (r) =>
      `${String(r.sequenceNumber).padStart(6)}  ${idCell(r.messageId, 24)}  ${idCell(r.dedupKey, 24)}  ${cut(r.deadLetterReason, 26)}  ${cut(r.deadLetterErrorDescription, 30)}  ${String(r.deliveryCount ?? '').padStart(3)}  ${cut(r.enqueuedTimeUtc?.slice(0, 19), 20)}  ${r.store.kind}: ${r.store.detail}`,
  );
  return [header, ...lines, `${rows.length} dead-lettered message(s)`].join('\n');
}

/** A terminal prompt, for `purge` without --yes. */
export function terminalConfirm(): ((question: string) => Promise<boolean>) | undefined {
  if (!process.stdin.isTTY) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(question)).trim());
    } finally {
      rl.close();
    }
  };
}
