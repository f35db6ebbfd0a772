// The consumer paths of `npm run bench -- --host`, as messages on the orders queue: the stored state
// each path needs (prepared untimed: the app's side through the consumer, the bare side with bare
// writes of the documents bareLoops.ts shapes) and the messages a real sender would send. Names and
// ids as in consumerScenarios.ts, so both benches speak of the same paths.
import type { Container, OperationInput } from '@azure/cosmos';
import { gateDoc, inboxDoc, orderDoc, outboxDoc, parkedDoc } from './bareLoops.js';
import { order, payment, runAll } from './consumerScenarios.js';
import type { Consume } from './consumerScenarios.js';

/** One message as a sender puts it on the queue: MessageId, Subject, a JSON body (or, for an invalid one, a string). */
export interface BenchMessage {
  readonly messageId: string;
  readonly subject: 'OrderPlaced' | 'PaymentReceived';
  readonly body: unknown;
}

/**
 * placed: one order and one OrderAccepted outbox entry; paid: the order's amountPaid is 1 (one payment
 * applied once); parked: no order and one parked item; unchanged: the order stored before (customer `c`)
 * with its one outbox entry; none: nothing under the order (an invalid message's rejection lives elsewhere).
 */
export type Effect = 'placed' | 'paid' | 'parked' | 'unchanged' | 'none';

export interface HostPath {
  readonly name: string;
  /** Received and abandoned once before the timed drain, so the broker delivers it with a delivery count above 1. */
  readonly redelivered: boolean;
  /** Refused on every delivery (abandoned) until the broker dead-letters it at the queue's maxDeliveryCount. */
  readonly deadLettered: boolean;
  /** What the bare loop leaves out that the app writes, said under the table. */
  readonly note?: string;
  /** The effect each message's order must show once drained (both sides; checked in bench/hostEffects.ts). */
  readonly effect: Effect;
  /** The state the path needs, written through the consumer; returns the messages to enqueue. */
  prepareApp(consume: Consume, orderIds: readonly string[]): Promise<BenchMessage[]>;
  /** The same state as bare documents. */
  prepareBare(container: Container, orderIds: readonly string[]): Promise<BenchMessage[]>;
}

const placed = (orderId: string): BenchMessage => ({ messageId: `m-${orderId}`, subject: 'OrderPlaced', body: order(orderId) });
const paid = (orderId: string): BenchMessage => ({ messageId: `p-${orderId}`, subject: 'PaymentReceived', body: payment(orderId) });
const conflicting = (orderId: string): BenchMessage => ({ messageId: `x-${orderId}`, subject: 'OrderPlaced', body: order(orderId, 'other') });
/** Bytes that are not JSON, as a broken sender would send them (a string body would be sent JSON-encoded, hence valid). */
const invalid = (orderId: string): BenchMessage => ({ messageId: `bad-${orderId}`, subject: 'OrderPlaced', body: Buffer.from('{"orderId":') });

const creates = (...docs: object[]): OperationInput[] => docs.map((resourceBody) => ({ operationType: 'Create', resourceBody: resourceBody as never }));
const each = (ids: readonly string[], run: (id: string) => Promise<unknown>) => runAll(ids.length, (i) => run(ids[i]!));
const viaConsumer = (consume: Consume, ids: readonly string[], message: (id: string) => BenchMessage) =>
  each(ids, (id) => {
    const m = message(id);
    return consume(m.messageId, m.subject, m.body);
  });
/** A placed order as the bare loop finds it: the order and its outbox entry. */
export const bareOrderPlaced = (container: Container, orderId: string) => container.items.batch(creates(orderDoc(orderId), outboxDoc(orderId)), orderId);
/** A payment the bare loop applied: its inbox marker and the order's new amount. */
export async function barePaymentApplied(container: Container, orderId: string): Promise<void> {
  const { resource, etag } = await container.item(orderId, orderId).read();
  await container.items.batch(
    [...creates(inboxDoc(orderId)), { operationType: 'Replace', id: orderId, resourceBody: { ...resource, amountPaid: 1 }, ifMatch: etag }],
    orderId,
  );
}
/** A payment parked before its order: the item and the open gate. */
export const bareParked = (container: Container, orderId: string) => container.items.batch(creates(parkedDoc(orderId), gateDoc(orderId, 'open')), orderId);

const none = async () => undefined;

export const hostPaths: readonly HostPath[] = [
  {
    name: 'OrderPlaced, new',
    effect: 'placed',
    redelivered: false,
    deadLettered: false,
    note: 'the bare loop creates the order and its outbox entry; the app creates one more document there, the closed arrival gate',
    prepareApp: async (_c, ids) => ids.map(placed),
    prepareBare: async (_c, ids) => ids.map(placed),
  },
  {
    name: 'OrderPlaced, duplicate (redelivered)',
    effect: 'placed',
    redelivered: true,
    deadLettered: false,
    prepareApp: async (consume, ids) => (await viaConsumer(consume, ids, placed), ids.map(placed)),
    prepareBare: async (container, ids) => (await each(ids, (id) => bareOrderPlaced(container, id)), ids.map(placed)),
  },
  {
    name: 'PaymentReceived, new',
    effect: 'paid',
    redelivered: false,
    deadLettered: false,
    prepareApp: async (consume, ids) => (await viaConsumer(consume, ids, placed), ids.map(paid)),
    prepareBare: async (container, ids) => (await each(ids, (id) => bareOrderPlaced(container, id)), ids.map(paid)),
  },
  {
    name: 'PaymentReceived, duplicate (redelivered)',
    effect: 'paid',
    redelivered: true,
    deadLettered: false,
    prepareApp: async (consume, ids) => (await viaConsumer(consume, ids, placed), await viaConsumer(consume, ids, paid), ids.map(paid)),
    prepareBare: async (container, ids) => (
      await each(ids, async (id) => (await bareOrderPlaced(container, id), await barePaymentApplied(container, id))),
      ids.map(paid)
    ),
  },
  {
    name: 'PaymentReceived, early (parked)',
    effect: 'parked',
    redelivered: false,
    deadLettered: false,
    prepareApp: async (_c, ids) => ids.map(paid),
    prepareBare: async (_c, ids) => ids.map(paid),
  },
  {
    name: 'OrderPlaced, one payment parked',
    effect: 'paid',
    redelivered: false,
    deadLettered: false,
    prepareApp: async (consume, ids) => (await viaConsumer(consume, ids, paid), ids.map(placed)),
    prepareBare: async (container, ids) => (await each(ids, (id) => bareParked(container, id)), ids.map(placed)),
  },
  {
    name: 'conflict, until dead-lettered',
    effect: 'unchanged',
    redelivered: false,
    deadLettered: true,
    prepareApp: async (consume, ids) => (await viaConsumer(consume, ids, placed), ids.map(conflicting)),
    prepareBare: async (container, ids) => (await each(ids, (id) => bareOrderPlaced(container, id)), ids.map(conflicting)),
  },
  {
    name: 'invalid, until dead-lettered',
    effect: 'none',
    redelivered: false,
    deadLettered: true,
    prepareApp: async (_c, ids) => (await none(), ids.map(invalid)),
    prepareBare: async (_c, ids) => (await none(), ids.map(invalid)),
  },
];

/**
 * `--paths 'OrderPlaced, new,PaymentReceived, new'`: a comma list of path names, which hold commas
 * themselves, so the pieces are joined back until they spell a name; `all` for every path.
 */
export function selectPaths(list: string): HostPath[] {
  if (list.trim() === 'all') return [...hostPaths];
  const names: string[] = [];
  let pending = '';
  for (const piece of list.split(',').map((p) => p.trim())) {
    if (piece === '') continue;
    pending = pending === '' ? piece : `${pending}, ${piece}`;
    if (!hostPaths.some((p) => p.name === pending)) continue;
    names.push(pending);
    pending = '';
  }
  if (pending !== '' || names.length === 0)
    throw new Error(`--paths: no path is named "${pending || list}"; the paths are: ${hostPaths.map((p) => p.name).join('; ')}`);
  return hostPaths.filter((p) => names.includes(p.name));
}
