import type { Database } from '@azure/cosmos';
import type { ServiceBusAdministrationClient } from '@azure/service-bus';
import type { SetupSettings } from '../config.js';
import {
  checkDatabase,
  checkLeasesContainer,
  checkOrderEventsTopic,
  checkOrdersContainer,
  checkOrdersQueue,
  checkSubscription,
  expectedSubscriptions,
} from '../doctor/index.js';
import type { CheckResult, FoundContainer, FoundRule } from '../doctor/index.js';
import { DlqSetupError } from './setupChecks.js';

/** A read the credential was refused: reported as a WRONG line for that resource, the other checks go on. */
class RefusedRead extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

export interface ServiceBusReadTarget {
  readonly admin: ServiceBusAdministrationClient;
  /** How the namespace was named, for messages. */
  readonly namespace: string;
  readonly timeoutMs: number;
}

/** Reads the queue, the topic, its subscriptions and their rules through the administration API, and checks each. */
export async function checkServiceBus(settings: SetupSettings, target: ServiceBusReadTarget): Promise<CheckResult[]> {
  const { admin } = target;
  const options = () => ({ abortSignal: AbortSignal.timeout(target.timeoutMs) });
  const queue = await attempt(
    target,
    `queue '${settings.ordersQueueName}'`,
    () => admin.getQueue(settings.ordersQueueName, options()),
    (found) => checkOrdersQueue(settings, found),
  );
  const topicName = settings.orderEventsTopicName;
  const topic = await attempt(
    target,
    `topic '${topicName}'`,
    () => admin.getTopic(topicName, options()),
    (found) => checkOrderEventsTopic(settings, found),
  );
  const subscriptions: CheckResult[] = [];
  for (const expected of expectedSubscriptions(settings)) {
    const subject = `subscription '${topicName}/${expected.name}'`;
    subscriptions.push(
      ...(await attempt(
        target,
        subject,
        async () => {
          const found = await admin.getSubscription(topicName, expected.name, options());
          const rules: FoundRule[] = [];
          for await (const rule of admin.listRules(topicName, expected.name, options())) rules.push(rule);
          return { found, rules };
        },
        (read) => checkSubscription(topicName, expected, read?.found, read?.rules ?? []),
      )),
    );
  }
  return [...queue, ...topic, ...subscriptions];
}

export interface CosmosReadTarget {
  readonly database: Database;
  readonly endpoint: string;
  readonly timeoutMs: number;
}

/** Reads the database and both containers' definitions (partition key, default TTL, indexing policy), and checks each. */
export async function checkCosmos(settings: SetupSettings, target: CosmosReadTarget): Promise<CheckResult[]> {
  const { database } = target;
  const options = () => ({ abortSignal: AbortSignal.timeout(target.timeoutMs) });
  const databaseSubject = `database '${database.id}'`;
  const exists = await attempt(
    target,
    databaseSubject,
    async () => (await database.read(options())).resource,
    (found) => checkDatabase(settings, found !== undefined),
  );
  if (exists.some((r) => r.status !== 'ok')) return exists;
  const readContainer = async (name: string): Promise<FoundContainer | undefined> => (await database.container(name).read(options())).resource;
  const orders = await attempt(
    target,
    `container '${settings.cosmos.ordersContainerName}'`,
    () => readContainer(settings.cosmos.ordersContainerName),
    (found) => checkOrdersContainer(settings, found),
  );
  const leases = await attempt(
    target,
    `container '${settings.cosmos.leasesContainerName}'`,
    () => readContainer(settings.cosmos.leasesContainerName),
    (found) => checkLeasesContainer(settings, found),
  );
  return [...exists, ...orders, ...leases];
}

/**
 * One read and its checks. "Not found" is an answer (undefined: the check says MISSING); a refused
 * credential is a WRONG line naming the role; anything else (no answer, an unknown host) stops the
 * doctor with exit code 2, as the dead-letter tool does.
 */
async function attempt<T>(
  target: { readonly timeoutMs: number; readonly namespace?: string; readonly endpoint?: string },
  subject: string,
  read: () => Promise<T | undefined>,
  check: (found: T | undefined) => CheckResult[],
): Promise<CheckResult[]> {
  try {
    return check(await readOrNothing(read));
  } catch (error) {
    if (error instanceof RefusedRead) {
      return [
        {
          status: 'WRONG',
          subject,
          property: 'readable',
          expected: readableWith(subject),
          found: error.detail,
          fix: 'grant the role, or run with a credential that has it',
        },
      ];
    }
    throw new DlqSetupError(
      `reading ${subject} at ${target.namespace ?? target.endpoint ?? ''} failed${isTimeout(error) ? ` (no answer within ${target.timeoutMs} ms)` : ''}: ${messageOf(error)}`,
    );
  }
}

async function readOrNothing<T>(read: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    const e = error as { code?: unknown; statusCode?: unknown };
    if (e.code === 'MessageEntityNotFoundError' || e.code === 404) return undefined;
    if (e.code === 'UnauthorizedRequestError' || [401, 403].includes(Number(e.statusCode ?? e.code)))
      throw new RefusedRead(`refused (${String(e.statusCode ?? e.code)}): ${messageOf(error).split('\n')[0] ?? ''}`);
    throw error;
  }
}

function readableWith(subject: string): string {
  if (/^(database|container)/.test(subject))
    return 'a key, or an identity with a Cosmos DB data-plane role (the app: Built-in Data Contributor on the container)';
  return 'Manage rights: a SAS key with Manage, or Azure Service Bus Data Owner (what the app holds on its queue and the fulfilment subscription)';
}

function isTimeout(error: unknown): boolean {
  const name = String((error as { name?: unknown } | undefined)?.name ?? '');
  return name === 'AbortError' || name === 'TimeoutError';
}

function messageOf(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown } | undefined;
  return String(e?.message ?? e?.code ?? error).trim();
}
