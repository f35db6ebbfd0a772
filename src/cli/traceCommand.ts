import type { ServiceBusClient, ServiceBusReceiver } from '@azure/service-bus';
import type { Command } from 'commander';
import { loadOperatorActionRetentionSeconds } from '../config.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../idempotency/index.js';
import { intakeKeyRecordId } from '../intake/index.js';
import { answerDeadline, NoAnswerError } from './answerDeadline.js';
import type { AnswerDeadline, Sleeper } from './answerDeadline.js';
import { listOperatorActions } from './auditCommands.js';
import { entityPath, peekAll } from './deadLetterQueue.js';
import type { EntityAddress } from './deadLetterQueue.js';
import { cut } from './tableCell.js';
import { oneLine } from './terminalText.js';
import { documentEvents, messageConcerns, messageEvent, orderIdOfBody, timeline, traceIdsOf, traceparentsOf } from './traceTimeline.js';
import type { PeekedMessageView, TraceEvent, TraceSubject } from './traceTimeline.js';

/** The document types an order's partition holds: each is read with a query in that partition. */
const orderDocTypes = ['intake', 'order', 'inbox', 'outbox', 'parked', 'parking-lot', 'rejection', 'conflict', 'shipment'] as const;
/** A peek stops after this many messages per entity, so one trace stays bounded on a long backlog. */
const maxPeekedPerEntity = 5_000;

export interface TraceConnections {
  readonly entities: () => readonly EntityAddress[];
  /** A Service Bus client, closed by the caller; undefined without a namespace or connection string. */
  readonly serviceBus: (() => ServiceBusClient) | undefined;
  readonly store: ((run: (ctx: { store: DocumentStore; now: () => number }) => Promise<void>) => Promise<void>) | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--timeout`: each call to the broker or the store answers within it, or that source is given up. */
  readonly timeoutMs: number;
  /** The deadline's timer; tests hold it. */
  readonly sleep?: Sleeper;
}

export interface TraceReport {
  readonly input: string;
  readonly orderId?: string;
  /** W3C trace ids: search `operation_Id` in Application Insights. */
  readonly traceIds: readonly string[];
  readonly events: readonly TraceEvent[];
  readonly warnings: readonly string[];
  /** The sources that gave no answer within --timeout (`Cosmos DB`, `Service Bus`): the trace is partial. */
  readonly timedOut: readonly string[];
}

export function addTraceCommand(
  program: Command,
  io: { stdout(text: string): void; stderr(text: string): void },
  setExitCode: (code: number) => void,
  connections: () => TraceConnections,
): void {
  program
    .command('trace <keyOrOrderId>')
    .description(
      'everything the system holds for one idempotency key, MessageId or order id, in time order: intake record and answer, outbox entries, broker messages (waiting, scheduled, dead-lettered), the order, inbox markers, parked items, conflicts, rejections, the shipment, operator actions; and the trace id for Application Insights',
    )
    .option('--json', 'print JSON for scripts')
    .action(async (input: string, options: { json?: boolean }) => {
      const report = await traceKey(connections(), input);
      for (const w of report.warnings) io.stderr(`warning: ${oneLine(w)}`);
      io.stdout(options.json ? JSON.stringify(report, null, 2) : traceText(report));
      setExitCode(report.timedOut.length > 0 ? 2 : report.events.length === 0 ? 1 : 0);
    });
}

export async function traceKey(c: TraceConnections, input: string): Promise<TraceReport> {
  const warnings: string[] = [];
  const documents: Record<string, unknown>[] = [];
  let orderId: string | undefined;
  let actions: Record<string, unknown>[] = [];
  const deadline = answerDeadline(c.timeoutMs, c.sleep);
  const readStore = async (run: (store: DocumentStore, now: () => number) => Promise<void>) => {
    if (!c.store || deadline.silent().includes(storeSource)) return;
    try {
      await c.store((ctx) => run(storeWithin(ctx.store, deadline), ctx.now));
    } catch (error) {
      if (!(error instanceof NoAnswerError)) throw error;
      warnings.push(`${error.message}: the stored records are not (all) in this trace`);
    }
  };
  // An HTTP intake key names its order in its own record; anything else is taken as the order id.
  await readStore(async (store) => {
    const keyRecord = (await store.read<{ id: string; requestOrderId?: string }>(intakeKeyRecordId(input), intakeKeyRecordId(input)))?.document;
    if (keyRecord) documents.push(keyRecord as unknown as Record<string, unknown>);
    orderId = keyRecord?.requestOrderId;
  });
  const messages = await peekMessages(c, { input, orderId: orderId ?? input }, warnings, deadline);
  orderId ??= messages.map((m) => orderIdOfBody(m.message.body)).find((id) => id !== undefined) ?? input;
  if (!c.store) warnings.push('no --cosmos-endpoint: the stored records are not in this trace');
  await readStore(async (store, now) => {
    for (const docType of orderDocTypes)
      documents.push(...(await store.find<{ id: string }>({ docType, partitionKey: orderId })).map((f) => f.document as unknown as Record<string, unknown>));
    const horizonMs = loadOperatorActionRetentionSeconds(c.env) * 1000;
    const all = await listOperatorActions({ store, now }, { sinceMs: now() - horizonMs, untilMs: now() });
    actions = all.filter((a) => a.targets.some((t) => t === input || t === orderId || t.startsWith(`${orderId ?? input}/`))) as unknown as Record<
      string,
      unknown
    >[];
  });
  const events = [...documents, ...actions].flatMap(documentEvents).concat(messages.map((m) => messageEvent(m.message, m.where)));
  const traceIds = traceIdsOf([...documents, ...messages.map((m) => m.message as unknown as Record<string, unknown>)].flatMap(traceparentsOf));
  return { input, orderId, traceIds, events: timeline(events), warnings, timedOut: deadline.silent() };
}

const storeSource = 'Cosmos DB';
const brokerSource = 'Service Bus';

/** The store, each call of it answering within the deadline. */
function storeWithin(store: DocumentStore, deadline: AnswerDeadline): DocumentStore {
  return {
    read: <D extends StoredDocument>(partitionKey: string, id: string): Promise<VersionedDocument<D> | undefined> =>
      deadline.within(storeSource, () => store.read<D>(partitionKey, id)),
    find: <D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> => deadline.within(storeSource, () => store.find<D>(query)),
    commit: (partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> =>
      deadline.within(storeSource, () => store.commit(partitionKey, operations)),
  };
}

async function peekMessages(
  c: TraceConnections,
  subject: TraceSubject,
  warnings: string[],
  deadline: AnswerDeadline,
): Promise<{ message: PeekedMessageView; where: string }[]> {
  if (!c.serviceBus) {
    warnings.push("no --namespace or --connection-string: the broker's messages are not in this trace");
    return [];
  }
  const client = c.serviceBus();
  const found: { message: PeekedMessageView; where: string }[] = [];
  try {
    for (const address of c.entities()) {
      for (const subQueue of ['live', 'deadLetter'] as const) {
        if (deadline.silent().includes(brokerSource)) break;
        const where = subQueue === 'live' ? `${entityPath(address)} (live)` : `${entityPath(address)}/$deadletterqueue`;
        const receiver = receiverWithin(receiverOf(client, address, subQueue), deadline);
        try {
          let peeked = 0;
          for await (const m of peekAll(receiver)) {
            if (messageConcerns(m as PeekedMessageView, subject))
              found.push({ message: { ...(m as PeekedMessageView), sequenceNumber: m.sequenceNumber?.toString() }, where });
            if ((peeked += 1) >= maxPeekedPerEntity) {
              warnings.push(`${where}: stopped after ${maxPeekedPerEntity} messages`);
              break;
            }
          }
        } catch (error) {
          if (error instanceof NoAnswerError) warnings.push(`${error.message}: the broker's messages are not (all) in this trace (from ${where} on)`);
          else warnings.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
        } finally {
          await deadline.settle(() => receiver.close());
        }
      }
    }
  } finally {
    await deadline.settle(() => client.close());
  }
  return found;
}

/** The receiver, each peek answering within the deadline. */
function receiverWithin(receiver: ServiceBusReceiver, deadline: AnswerDeadline): ServiceBusReceiver {
  return new Proxy(receiver, {
    get: (target, name, self) =>
      name === 'peekMessages'
        ? (...args: Parameters<ServiceBusReceiver['peekMessages']>) => deadline.within(brokerSource, () => target.peekMessages(...args))
        : (Reflect.get(target, name, self) as unknown),
  });
}

function receiverOf(client: ServiceBusClient, address: EntityAddress, subQueue: 'live' | 'deadLetter'): ServiceBusReceiver {
  const options = subQueue === 'deadLetter' ? { subQueueType: 'deadLetter' as const } : {};
  return address.queue ? client.createReceiver(address.queue, options) : client.createReceiver(address.topic ?? '', address.subscription ?? '', options);
}

export function traceText(report: TraceReport): string {
  const head = [oneLine(`trace of ${report.input}${report.orderId && report.orderId !== report.input ? ` (order ${report.orderId})` : ''}`)];
  const lines = report.events.map((e) => `${cut(e.at.slice(0, 23), 24)}  ${cut(e.where, 34)}  ${cut(e.what, 24)}  ${cut(e.id, 36)}  ${oneLine(e.detail)}`);
  const trace =
    report.traceIds.length > 0
      ? report.traceIds.map((id) => `Application Insights: operation_Id == "${id}" (Transaction search, or: union * | where operation_Id == "${id}")`)
      : ['no trace id stored for it'];
  return [...head, ...lines, `${report.events.length} event(s)`, ...trace].join('\n');
}
