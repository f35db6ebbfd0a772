import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { DefaultAzureCredential } from '@azure/identity';
import type { TokenCredential } from '@azure/identity';
import type { Command } from 'commander';
import { loadOperatorActionRetentionSeconds } from '../config.js';
import { CosmosDocumentStore, createCosmosClient } from '../cosmos/index.js';
import { create, replace } from '../idempotency/index.js';
import type { DocumentStore } from '../idempotency/index.js';
import { OperatorActionError, finishedAction, justificationProblem, operatorActionDocument, principalOfToken, resolveOperator } from './operatorAction.js';
import type { CommandKind, OperatorActionDocument, TokenPrincipal } from './operatorAction.js';
import { bulkSelectors, plansOnly } from './bulkCommands.js';
import type { GlobalOptions } from './globalOptions.js';
import { defaultPurgeExportPath } from './purgeExport.js';
import { endpointHostOf } from './serviceBusConnection.js';

/**
 * Every command of the tool, by its path, and whether it changes anything. One table, so a test can
 * prove it names every command there is: a new command is read-only only if someone says so here.
 * `destructive-when-bulk`: destructive when `--all` or a filter, not named targets, picks what it acts on.
 */
export const commandKinds: Readonly<Record<string, CommandKind | 'destructive-when-bulk'>> = {
  list: 'read-only',
  show: 'read-only',
  resubmit: 'destructive-when-bulk',
  purge: 'destructive',
  'parked list': 'read-only',
  'parked resubmit': 'destructive-when-bulk',
  'parked discard': 'destructive',
  'outbox list': 'read-only',
  'outbox requeue': 'destructive-when-bulk',
  'shipments list': 'read-only',
  'shipments resolve': 'changes',
  doctor: 'read-only',
  audit: 'read-only',
  'groups list': 'read-only',
  'groups retry': 'destructive',
  trace: 'read-only',
};

/** What the tests replace: the store the records go to, the credential's token, the OS user, ids. */
export interface OperatorActionIo {
  readonly store?: DocumentStore;
  readonly token?: (scope: string) => Promise<string | undefined>;
  readonly osUser?: () => string | undefined;
  readonly newId?: () => string;
}

interface ProgramIo {
  readonly stderr: (text: string) => void;
  /** The Entra ID credential the tool uses for Cosmos DB without a key: the records are written, and the principal read, with it. */
  readonly cosmosCredential?: TokenCredential;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now?: () => number;
  readonly actions?: OperatorActionIo;
}

/** The global options the log reads, and `--operator`, which it adds. */
type GlobalView = Partial<
  Pick<
    GlobalOptions,
    'connectionString' | 'namespace' | 'queue' | 'topic' | 'subscription' | 'cosmosEndpoint' | 'cosmosKey' | 'cosmosDatabase' | 'cosmosContainer'
  >
> & { operator?: string };

/** A command's path from the root, e.g. `parked discard`. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The commands that run something (no subcommands of their own), depth first. */
export function leafCommands(command: Command): Command[] {
  return command.commands.flatMap((c) => (c.commands.length === 0 ? [c] : leafCommands(c)));
}

/** The kind a run has: by the table, and for bulk commands by whether targets were named. Unknown commands count as changing. */
export function commandKindOf(path: string, targets: readonly string[], options: Readonly<Record<string, unknown>>): CommandKind {
  const rule = commandKinds[path] ?? 'changes';
  if (rule !== 'destructive-when-bulk') return rule;
  const filtered = bulkSelectors.some((name) => options[name] !== undefined);
  return options.all === true || (targets.length === 0 && filtered) ? 'destructive' : 'changes';
}

/**
 * Adds `--operator`, and `--why`/`--ticket` to each command that changes something, and records every
 * run of such a command (not a `--dry-run`) BEFORE it acts: a record that cannot be written stops the
 * command, so nothing is changed unrecorded. After the action the record is marked finished with the
 * exit code; one left `started` is a run that died or failed with an error. `recorded` hears the
 * record's id before the action runs, so what the action writes can name its run.
 */
export function registerOperatorActions(program: Command, io: ProgramIo, exitCode: () => number, recorded?: (actionId: string) => void): void {
  program.option('--operator <name>', 'who acts, for the operator-action record when no credential names you (default: the OS user)');
  for (const command of leafCommands(program)) {
    if (commandKinds[commandPath(command)] === 'read-only') continue;
    command.option('--why <text>', 'why you do this (recorded in the operator-action log; required to purge, discard or act in bulk)');
    command.option('--ticket <id>', 'the ticket or incident this is for (recorded; may stand in for --why)');
  }
  const started = new WeakMap<Command, OperatorActionDocument>();
  program.hook('preAction', async (_root, action) => {
    const record = await startRecord(program, action, io);
    if (!record) return;
    started.set(action, record);
    recorded?.(record.id);
  });
  program.hook('postAction', async (_root, action) => {
    const record = started.get(action);
    if (!record) return;
    try {
      await withActionStore(program.opts<GlobalView>(), io, async (store) => {
        const stored = await store.read<OperatorActionDocument>(record.orderId, record.id);
        if (stored) await store.commit(record.orderId, [replace(finishedAction(record, now(io), exitCode()), stored.etag)]);
      });
    } catch (error) {
      io.stderr(`warning: the action ran, but its record ${record.id} could not be marked finished: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

async function startRecord(program: Command, action: Command, io: ProgramIo): Promise<OperatorActionDocument | undefined> {
  const path = commandPath(action);
  const options = action.opts<Record<string, unknown>>();
  const targets = action.processedArgs.flat().filter((a): a is string => typeof a === 'string');
  const kind = commandKindOf(path, targets, options);
  // A dry run, or a bulk run without --yes, only shows its plan: it changes nothing, so it is not recorded.
  if (kind === 'read-only' || plansOnly(path, targets, options)) return undefined;
  const why = options.why as string | undefined;
  const ticket = options.ticket as string | undefined;
  const problem = justificationProblem(kind, why, ticket);
  if (problem !== undefined) throw new OperatorActionError(`${path}: ${problem}`);
  if (options.export === false && (why ?? '').trim() === '')
    throw new OperatorActionError(`${path}: --no-export destroys the only copy: say why with --why <text>`);
  const globals = program.opts<GlobalView>();
  // `--export <file>` before `--no-export` leaves the default undefined: both that and `true` mean "export, to the default file".
  if (path === 'purge' && (options.export === true || options.export === undefined))
    action.setOptionValue('export', defaultPurgeExportPath(scopeOf(globals), now(io)));
  const operator = resolveOperator({ token: await tokenPrincipal(globals, io), operatorFlag: globals.operator, osUser: (io.actions?.osUser ?? osUser)() });
  const { why: _why, ticket: _ticket, ...ownOptions } = options;
  const record = operatorActionDocument({
    id: io.actions?.newId?.() ?? randomUUID(),
    atEpochMs: now(io),
    command: path,
    kind,
    targets,
    options: { ...ownOptions, ...(path === 'purge' ? { export: action.opts().export } : {}) },
    scope: scopeOf(globals),
    operator,
    why,
    ticket,
    ttlSeconds: loadOperatorActionRetentionSeconds(io.env),
  });
  await withActionStore(globals, io, async (store) => {
    const result = await store.commit(record.orderId, [create(record)]);
    if (result.kind !== 'committed') throw new OperatorActionError(`could not record the action (${result.kind}); nothing was changed`);
  });
  return record;
}

/** The non-secret coordinates of what the tool talks to: never the connection string or key. */
function scopeOf(globals: GlobalView): Record<string, string> {
  const namespace = globals.namespace ?? endpointHostOf(globals.connectionString);
  const entries = Object.entries({
    namespace,
    queue: globals.topic ? undefined : globals.queue,
    topic: globals.topic,
    subscription: globals.subscription,
    cosmosEndpoint: globals.cosmosEndpoint,
    cosmosDatabase: globals.cosmosDatabase,
    cosmosContainer: globals.cosmosContainer,
  }).filter((e): e is [string, string] => typeof e[1] === 'string');
  return Object.fromEntries(entries);
}

/** The principal the tool's credential resolves to, when it uses one (no key, no connection string). */
async function tokenPrincipal(globals: GlobalView, io: ProgramIo): Promise<TokenPrincipal | undefined> {
  const scope = globals.namespace ? 'https://servicebus.azure.net/.default' : globals.cosmosEndpoint && !globals.cosmosKey ? cosmosScope : undefined;
  if (scope === undefined) return undefined;
  // The Cosmos DB credential the tool was given (a test's scoped principal) when Cosmos DB is what names the operator.
  const credential = scope === cosmosScope && io.cosmosCredential ? io.cosmosCredential : new DefaultAzureCredential();
  const token = io.actions?.token ? await io.actions.token(scope) : (await credential.getToken(scope))?.token;
  return token === undefined ? undefined : principalOfToken(token);
}

async function withActionStore(globals: GlobalView, io: ProgramIo, run: (store: DocumentStore) => Promise<void>): Promise<void> {
  if (io.actions?.store) return run(io.actions.store);
  if (!globals.cosmosEndpoint)
    throw new OperatorActionError('every change is recorded in the orders container (see `audit`): give --cosmos-endpoint (or COSMOS_ENDPOINT)');
  const cosmos = createCosmosClient({ endpoint: globals.cosmosEndpoint, key: globals.cosmosKey, credential: io.cosmosCredential });
  try {
    await run(new CosmosDocumentStore(cosmos.database(globals.cosmosDatabase ?? 'orders').container(globals.cosmosContainer ?? 'orders')));
  } finally {
    cosmos.dispose();
  }
}

function osUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

const now = (io: ProgramIo) => (io.now ?? Date.now)();
const cosmosScope = 'https://cosmos.azure.com/.default';
