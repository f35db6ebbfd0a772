import type { Container } from '@azure/cosmos';
import type { ServiceBusClient } from '@azure/service-bus';
import { deadLetterReceiver, entityPath } from './deadLetterQueue.js';
import type { EntityAddress } from './deadLetterQueue.js';
import { namespaceOf, serviceBusClientOf } from './serviceBusConnection.js';
import type { ServiceBusConnectionOptions } from './serviceBusConnection.js';

/** The tool cannot start: a wrong name, a refused credential, an unreachable service. Exit code 2. */
export class DlqSetupError extends Error {
  override readonly name = 'DlqSetupError';
}

export interface ServiceBusTarget {
  /** A client that does not retry by itself: this check decides what is worth another try. */
  readonly client: ServiceBusClient;
  readonly address: EntityAddress;
  /** How the namespace was given: its name, or the endpoint of a connection string. */
  readonly namespace: string;
  readonly timeoutMs: number;
}

/**
 * Opens the entity's dead-letter queue once before anything else, so that a missing entity, a
 * refused credential or an unreachable namespace is named within the timeout instead of surfacing
 * as an empty error after the SDK's retries (about 90 s).
 */
async function checkServiceBusEntity(target: ServiceBusTarget): Promise<void> {
  const receiver = deadLetterReceiver(target.client, target.address);
  const startedAt = Date.now();
  let lastError: unknown;
  try {
    for (;;) {
      const leftMs = target.timeoutMs - (Date.now() - startedAt);
      if (leftMs <= 0) throw new DlqSetupError(explainServiceBusFailure(new DeadlineExceeded(lastError), target));
      try {
        await withDeadline(leftMs, (abortSignal) => receiver.peekMessages(1, { abortSignal }));
        return;
      } catch (error) {
        if (error instanceof DeadlineExceeded || isFinal(error))
          throw new DlqSetupError(explainServiceBusFailure(error instanceof DeadlineExceeded ? new DeadlineExceeded(lastError) : error, target));
        lastError = error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(500, leftMs)));
      }
    }
  } finally {
    await receiver.close().catch(() => undefined);
  }
}

/** `checkServiceBusEntity` on a client of its own that does not retry by itself, closed after the check. */
export async function probeServiceBusEntity(options: ServiceBusConnectionOptions, address: EntityAddress, timeoutMs: number): Promise<void> {
  const probe = serviceBusClientOf(options, { timeoutInMs: timeoutMs, maxRetries: 0 });
  await checkServiceBusEntity({ client: probe, address, namespace: namespaceOf(options), timeoutMs }).finally(() => probe.close());
}

/** Failures that another try within seconds cannot mend. */
function isFinal(error: unknown): boolean {
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  const name = String((error as { name?: unknown } | undefined)?.name ?? '');
  return (
    ['MessagingEntityNotFound', 'UnauthorizedAccess'].includes(code) ||
    /Credential|Authentication/.test(name) ||
    /ENOTFOUND|ECONNREFUSED|EHOSTUNREACH/.test(messageOf(error))
  );
}

export function explainServiceBusFailure(error: unknown, target: Pick<ServiceBusTarget, 'address' | 'namespace' | 'timeoutMs'>): string {
  const what = describeEntity(target.address);
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  const name = String((error as { name?: unknown } | undefined)?.name ?? '');
  const detail = messageOf(error);
  if (error instanceof DeadlineExceeded) {
    const last = error.lastError === undefined ? '' : `; last error: ${messageOf(error.lastError) || String((error.lastError as { code?: unknown }).code)}`;
    return `no answer from Service Bus namespace ${target.namespace} within ${seconds(target.timeoutMs)} while opening ${what}${last} (raise --timeout, or check the namespace name and the network)`;
  }
  if (code === 'MessagingEntityNotFound') return `${what} does not exist in Service Bus namespace ${target.namespace}${detail ? ` (${detail})` : ''}`;
  if (code === 'UnauthorizedAccess')
    return `Service Bus namespace ${target.namespace} refused the credential for ${what}: ${detail || 'unauthorized'} (with --namespace grant ${rolesFor(target.address)})`;
  if (/CredentialUnavailable|AuthenticationError|AggregateAuthentication/.test(name))
    return `no Entra ID token could be had for Service Bus namespace ${target.namespace}: ${detail} (sign in with az login, or give --connection-string)`;
  if (/ENOTFOUND|EAI_AGAIN/.test(detail))
    return `Service Bus namespace ${target.namespace} cannot be resolved: ${detail} (check --namespace or the connection string's Endpoint)`;
  if (/ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ETIMEDOUT/.test(detail)) return `Service Bus namespace ${target.namespace} cannot be reached: ${detail}`;
  return `opening ${what} in Service Bus namespace ${target.namespace} failed: ${detail || code || name || 'unknown error'}`;
}

/** The data-plane roles the tool needs on an entity, with their scopes, as infra/modules/rbac.bicep grants them to the operator group. */
export function rolesFor(address: EntityAddress): string {
  if (address.queue) return `Azure Service Bus Data Receiver and Azure Service Bus Data Sender on the queue ${address.queue}`;
  return `Azure Service Bus Data Receiver on the subscription ${address.topic ?? ''}/subscriptions/${address.subscription ?? ''}, and Azure Service Bus Data Sender on the topic ${address.topic ?? ''} to resubmit`;
}

export interface CosmosTarget {
  readonly container: Container;
  readonly endpoint: string;
  readonly timeoutMs: number;
}

/**
 * Reads the container's metadata before any store state is reported: against a mistyped database or
 * container every message would look `not-processed`, which the runbook says to resubmit. Only the
 * container: the role the template grants operators (Cosmos DB Built-in Data Contributor scoped to
 * this container) cannot read the database's metadata, and Cosmos DB answers that with 403.
 */
export async function checkCosmosContainer(target: CosmosTarget): Promise<void> {
  const { container } = target;
  try {
    await withDeadline(target.timeoutMs, (abortSignal) => container.read({ abortSignal }));
  } catch (error) {
    throw new DlqSetupError(explainCosmosFailure(error, container.database.id, container.id, target));
  }
}

/** Cosmos DB's built-in data-plane role the operator group gets on the orders container (infra/modules/rbac.bicep). */
export const cosmosOperatorRole = 'Cosmos DB Built-in Data Contributor (00000000-0000-0000-0000-000000000002)';

function explainCosmosFailure(error: unknown, database: string, containerId: string, target: CosmosTarget): string {
  const what = `container '${containerId}' in database '${database}'`;
  const code = Number((error as { code?: unknown } | undefined)?.code);
  const detail = messageOf(error).split('\n')[0] ?? '';
  if (error instanceof DeadlineExceeded) return `no answer from Cosmos DB at ${target.endpoint} within ${seconds(target.timeoutMs)} while reading ${what}`;
  if (code === 404)
    return `Cosmos DB ${what} does not exist at ${target.endpoint} (check --cosmos-database / COSMOS_DATABASE and --cosmos-container / COSMOS_ORDERS_CONTAINER)`;
  if (code === 401 || code === 403) {
    return `Cosmos DB at ${target.endpoint} refused the credential for ${what} (${code}${detail ? `: ${detail}` : ''}); grant the principal ${cosmosOperatorRole} on the scope /dbs/${database}/colls/${containerId} of that account (the operator group: operatorPrincipalId in infra/modules/rbac.bicep), or give --cosmos-key`;
  }
  return `reading Cosmos DB ${what} at ${target.endpoint} failed: ${detail || String(code)}`;
}

class DeadlineExceeded extends Error {
  constructor(readonly lastError?: unknown) {
    super('deadline exceeded');
  }
}

async function withDeadline<T>(timeoutMs: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeadlineExceeded());
    }, timeoutMs);
  });
  try {
    return await Promise.race([run(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function describeEntity(address: EntityAddress): string {
  return address.queue ? `queue '${address.queue}'` : `subscription '${entityPath(address)}'`;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error ?? '')).trim();
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
