import { Command, CommanderError } from 'commander';
import { addAuditCommand } from './auditCommands.js';
import { bulkCommandPaths, resolveBulkWindow } from './bulkCommands.js';
import type { CommandContexts } from './commandContexts.js';
import { withDeadLetterContext } from './deadLetterContext.js';
import { addDeadLetterCommands } from './deadLetterCommandGroup.js';
import type { DlqIo } from './dlqIo.js';
import { addDoctorCommand } from './doctorCommand.js';
import { withGlobalOptions } from './globalOptions.js';
import type { GlobalOptions } from './globalOptions.js';
import { addGroupsCommands, queueFileEntities } from './groupsCommands.js';
import { commandPath, registerOperatorActions } from './operatorActionLog.js';
import { addOutboxCommands } from './outboxCommandGroup.js';
import { addParkedCommands } from './parkedCommandGroup.js';
import { resubmitPolicyOf } from './resubmitPolicyOption.js';
import { commandClientOf } from './serviceBusConnection.js';
import { addShipmentCommands } from './shipmentCommands.js';
import { addTraceCommand } from './traceCommand.js';
import { withStoreContext } from './storeContext.js';
import { escapeControls, oneLine } from './terminalText.js';
import { whereLine } from './whereLine.js';

export type { DlqIo } from './dlqIo.js';

/** The commands that read every entity of the queue file: their first line names them all. */
const acrossEntities: ReadonlySet<string> = new Set(['groups list', 'groups retry', 'trace']);

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
    // An error may repeat what a sender or the operator wrote: it stays one line.
    io.stderr(`error: ${oneLine(describeError(error))}`);
    return 2;
  }
  return exitCode;
}

/** The operator tool: the global options, then each command group, in the order `--help` lists them. */
export function dlqProgram(io: DlqIo, reportExitCode: (code: number) => void): Command {
  let exitCode = 0;
  const setExitCode = (code: number) => {
    exitCode = code;
    reportExitCode(code);
  };
  const program: Command = withGlobalOptions(
    new Command('orders-ops')
      .description(
        'The operator tool (also orders-dlq): inspect, resubmit and purge dead-lettered messages of the orders queue or a topic subscription, parked items, outbox entries and escalated shipments.',
      )
      .configureOutput({ writeOut: (t) => io.stdout(t.trimEnd()), writeErr: (t) => io.stderr(t.trimEnd()) })
      .exitOverride(),
    io.env,
  )
    .hook('preAction', (_root, action) => announceWhere(program, action, io))
    .addHelpText('after', exitCodesHelp);
  const globals = () => program.opts<GlobalOptions>();
  // This run's operator-action record, once written: a parked resubmit's claims name it.
  let actionId: string | undefined;
  const contexts: CommandContexts = {
    deadLetters: (run) => withDeadLetterContext(globals(), io, run),
    store: (needsQueue, run) => withStoreContext(globals(), io, needsQueue, run, actionId),
  };

  addDeadLetterCommands(program, io, setExitCode, contexts);
  addParkedCommands(program, io, setExitCode, contexts);
  addOutboxCommands(program, io, setExitCode, contexts);
  addShipmentCommands(program, io, setExitCode, (run) => contexts.store(false, run));
  addDoctorCommand(program, io, setExitCode);
  addAuditCommand(program, io, (run) => contexts.store(false, run));
  addGroupsCommands(program, io, setExitCode, () => {
    const opts = globals();
    return {
      deadLetterEntities: () => queueFileEntities(opts.queue, io.env),
      deadLetters: (address, run) =>
        withDeadLetterContext({ ...opts, queue: address.queue, topic: address.topic, subscription: address.subscription }, io, run),
      store: opts.cosmosEndpoint ? (needsQueue, run) => withStoreContext(opts, io, needsQueue, run, actionId) : undefined,
      policy: () => resubmitPolicyOf(io, undefined),
      hooks: io.hooks,
    };
  });
  addTraceCommand(program, io, setExitCode, () => {
    const opts = globals();
    return {
      entities: () => queueFileEntities(opts.queue, io.env),
      // The command client: its retries wait 0.5 to 2 s, not the SDK's default 30 s, and trace bounds each call by --timeout.
      serviceBus: opts.connectionString || opts.namespace ? () => commandClientOf(opts, opts.timeout) : undefined,
      store: opts.cosmosEndpoint ? (run) => withStoreContext(opts, io, false, run) : undefined,
      env: io.env,
      timeoutMs: opts.timeout,
    };
  });
  // Before the record is written: `--since 2h` becomes the instant it meant, in the record and for the command alike.
  program.hook('preAction', (_root, action) => {
    if (bulkCommandPaths.has(commandPath(action))) resolveBulkWindow(action, (io.now ?? Date.now)());
  });
  registerOperatorActions(
    program,
    io,
    () => exitCode,
    (id) => (actionId = id),
  );
  return program;
}

/** The first line of every run: which namespace, entity and account it acts on. */
function announceWhere(program: Command, action: Command, io: DlqIo): void {
  const options = program.opts<GlobalOptions>();
  // azd's output names the namespace; a connection string given or in the environment wins.
  if (!options.namespace && !options.connectionString && io.env.SERVICEBUS_FULLY_QUALIFIED_NAMESPACE)
    program.setOptionValue('namespace', io.env.SERVICEBUS_FULLY_QUALIFIED_NAMESPACE);
  // The fulfilment consumer's name is its subscription's; CONSUMER_NAME is the orders consumer's.
  if (options.consumerName === undefined) program.setOptionValue('consumerName', options.subscription ?? io.env.CONSUMER_NAME);
  const address = options.topic && options.subscription ? { topic: options.topic, subscription: options.subscription } : { queue: options.queue };
  // groups and trace read every dead-letter queue of the queue file, not the one entity the options name.
  const entities = acrossEntities.has(commandPath(action)) ? queueFileEntities(options.queue, io.env) : undefined;
  io.announce?.(whereLine({ ...program.opts<GlobalOptions>(), address, entities }));
}

const exitCodesHelp = `
Exit codes:
  0  done
  1  a message failed, or a named message was not found
  2  bad usage, or Service Bus or Cosmos DB could not be used (a missing entity, database or
     container, a refused credential, no answer within --timeout): the message names which`;

/** Never an empty "error: ": an SDK error without a message still has a code or a name. */
function describeError(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown; name?: unknown } | undefined;
  const text = String(e?.message ?? '').trim();
  if (text) return text;
  return [e?.name, e?.code].filter((x) => x !== undefined && String(x) !== '').join(' ') || String(error);
}
