/**
 * The operator-action record: who changed what, when and why, kept in the orders container next to
 * what it changed. Pure decisions; the commander wiring and the store calls are in operatorActionLog.ts.
 */

export const operatorActionDocType = 'operator-action';

/** How a command changes things: not at all, or (destructive) in a way that wants a written why. */
export type CommandKind = 'read-only' | 'changes' | 'destructive';

export interface OperatorIdentity {
  /** What the audit shows: the principal name, else its object id, else the `--operator` name, else the OS user. */
  readonly name: string;
  readonly source: 'credential' | 'operator-flag' | 'os-user';
  /** From the credential's token (`oid`, `upn`/`preferred_username`, `tid`), when one was used. */
  readonly objectId?: string;
  readonly principalName?: string;
  readonly tenantId?: string;
  /** `--operator` given next to a credential: what the person said, beside what the token proves. */
  readonly claimed?: string;
}

export interface TokenPrincipal {
  readonly objectId?: string;
  readonly principalName?: string;
  readonly tenantId?: string;
}

export interface OperatorActionDocument {
  readonly id: string;
  /** The partition: `#operator-actions-<yyyy-mm>` (the container's partition key path is /orderId). */
  readonly orderId: string;
  readonly docType: typeof operatorActionDocType;
  readonly at: string;
  readonly command: string;
  readonly kind: Exclude<CommandKind, 'read-only'>;
  /** The named targets (sequence numbers, MessageIds, keys, order ids), as given. */
  readonly targets: readonly string[];
  /** The command's own options (filters, --all, --yes, --export...): never the global ones, which hold secrets. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The namespace entity or Cosmos container it acted on. */
  readonly scope: Readonly<Record<string, string>>;
  readonly operator: OperatorIdentity;
  readonly why?: string;
  readonly ticket?: string;
  readonly state: 'started' | 'finished';
  readonly finishedAt?: string;
  readonly exitCode?: number;
  /** Seconds; Cosmos DB removes the record after it (see loadOperatorActionRetentionSeconds). */
  readonly ttl: number;
}

export class OperatorActionError extends Error {
  override readonly name = 'OperatorActionError';
}

const maxTokenChars = 16 * 1024;
const maxClaimChars = 256;
export const maxWhyChars = 500;
export const maxTicketChars = 100;

/** The partition of the records made in the month of `epochMs` (UTC). */
export function operatorActionPartition(epochMs: number): string {
  return `#operator-actions-${new Date(epochMs).toISOString().slice(0, 7)}`;
}

/** The month partitions a window touches, oldest first; bounded, so a wide window cannot fan out without end. */
export function operatorActionPartitionsBetween(sinceMs: number, untilMs: number, maxPartitions = 60): string[] {
  if (!(sinceMs <= untilMs))
    throw new OperatorActionError(`--since (${new Date(sinceMs).toISOString()}) is after --until (${new Date(untilMs).toISOString()})`);
  const start = new Date(sinceMs);
  const partitions: string[] = [];
  for (let year = start.getUTCFullYear(), month = start.getUTCMonth(); Date.UTC(year, month, 1) <= untilMs; month += 1) {
    if (month === 12) {
      month = 0;
      year += 1;
    }
    if (partitions.length === maxPartitions) throw new OperatorActionError(`the window spans more than ${maxPartitions} months: narrow --since/--until`);
    partitions.push(operatorActionPartition(Date.UTC(year, month, 1)));
  }
  return partitions;
}

/**
 * The principal a bearer token names, read from its payload without verifying it: the token came from
 * our own credential a moment ago, and the record says what the services will see. Undefined when the
 * token is not a JWT with claims.
 */
export function principalOfToken(token: string): TokenPrincipal | undefined {
  if (token.length > maxTokenChars) return undefined;
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const c = claims as Record<string, unknown>;
  const principal = {
    objectId: claim(c.oid),
    principalName: claim(c.upn) ?? claim(c.preferred_username) ?? claim(c.unique_name) ?? claim(c.appid),
    tenantId: claim(c.tid),
  };
  return (principal.objectId ?? principal.principalName) ? principal : undefined;
}

function claim(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= maxClaimChars ? value : undefined;
}

/** Who acts: the credential's principal, else `--operator`, else the OS user; none of them is an error. */
export function resolveOperator(input: { readonly token?: TokenPrincipal; readonly operatorFlag?: string; readonly osUser?: string }): OperatorIdentity {
  const flag = nonBlank(input.operatorFlag);
  if (flag !== undefined && flag.length > maxClaimChars) throw new OperatorActionError(`--operator is longer than ${maxClaimChars} characters`);
  const token = input.token;
  if (token) {
    const name = token.principalName ?? token.objectId ?? '';
    return { name, source: 'credential', ...token, ...(flag === undefined ? {} : { claimed: flag }) };
  }
  if (flag !== undefined) return { name: flag, source: 'operator-flag' };
  const osUser = nonBlank(input.osUser);
  if (osUser !== undefined) return { name: osUser, source: 'os-user' };
  throw new OperatorActionError('no identity to record the action under (no credential token, no OS user): give --operator <name>');
}

/** A destructive command wants a written why (`--why`) or a ticket (`--ticket`); both are bounded. */
export function justificationProblem(kind: CommandKind, why: string | undefined, ticket: string | undefined): string | undefined {
  if (why !== undefined && why.length > maxWhyChars) return `--why is longer than ${maxWhyChars} characters`;
  if (ticket !== undefined && ticket.length > maxTicketChars) return `--ticket is longer than ${maxTicketChars} characters`;
  if (kind === 'destructive' && nonBlank(why) === undefined && nonBlank(ticket) === undefined) {
    return 'this command cannot be undone: say why with --why <text> or --ticket <id> (recorded in the operator-action log, see `audit`)';
  }
  return undefined;
}

export interface ActionInput {
  readonly id: string;
  readonly atEpochMs: number;
  readonly command: string;
  readonly kind: Exclude<CommandKind, 'read-only'>;
  readonly targets: readonly string[];
  readonly options: Readonly<Record<string, unknown>>;
  readonly scope: Readonly<Record<string, string>>;
  readonly operator: OperatorIdentity;
  readonly why?: string;
  readonly ticket?: string;
  readonly ttlSeconds: number;
}

export function operatorActionDocument(input: ActionInput): OperatorActionDocument {
  const why = nonBlank(input.why);
  const ticket = nonBlank(input.ticket);
  return {
    id: input.id,
    orderId: operatorActionPartition(input.atEpochMs),
    docType: operatorActionDocType,
    at: new Date(input.atEpochMs).toISOString(),
    command: input.command,
    kind: input.kind,
    targets: input.targets,
    options: input.options,
    scope: input.scope,
    operator: input.operator,
    ...(why === undefined ? {} : { why }),
    ...(ticket === undefined ? {} : { ticket }),
    state: 'started',
    ttl: input.ttlSeconds,
  };
}

export function finishedAction(record: OperatorActionDocument, atEpochMs: number, exitCode: number): OperatorActionDocument {
  return { ...record, state: 'finished', finishedAt: new Date(atEpochMs).toISOString(), exitCode };
}

/** The records inside [since, until], oldest first. */
export function actionsInWindow(records: readonly OperatorActionDocument[], sinceMs: number, untilMs: number): OperatorActionDocument[] {
  return records
    .filter((r) => {
      const at = Date.parse(r.at);
      return at >= sinceMs && at <= untilMs;
    })
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1));
}

function nonBlank(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
