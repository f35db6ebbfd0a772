// The floor for each consumer path: the same store work straight through the SDK, on documents of
// the same size and shape, through the same client. Keyed by the scenario names of consumerScenarios.ts.
import type { Container, OperationInput } from '@azure/cosmos';
import { ids, order, payment, runAll } from './consumerScenarios.js';
import type { Deliver } from './consumerScenarios.js';

const creates = (...docs: object[]): OperationInput[] => docs.map((resourceBody) => ({ operationType: 'Create', resourceBody: resourceBody as never }));
async function bareBatch(container: Container, pk: string, ops: OperationInput[]): Promise<number> {
  const response = await container.items.batch(ops, pk);
  return response.result?.[0]?.statusCode ?? response.code ?? 0;
}

export const orderDoc = (orderId: string) => ({
  id: orderId,
  docType: 'order',
  ...order(orderId),
  status: 'Accepted',
  statusVersion: 0,
  amountPaid: 0,
  paymentCount: 0,
  total: 10,
  fingerprint: 'f'.repeat(64),
  dedupKey: `m-${orderId}`,
});
export const outboxDoc = (orderId: string) => ({
  id: `outbox|OrderAccepted|${orderId}`,
  orderId,
  docType: 'outbox',
  payload: order(orderId),
  publishedAt: null,
});
export const gateDoc = (orderId: string, state: string) => ({
  id: `parking-lot|${orderId}`,
  orderId,
  docType: 'parking-lot',
  state,
  changedAt: '2026-11-30T08:00:00Z',
});
export const inboxDoc = (orderId: string) => ({ id: `inbox|bare-${orderId}`, orderId, docType: 'inbox', fingerprint: 'f'.repeat(64), ttl: 3600 });
export const parkedDoc = (orderId: string) => ({
  id: `parked|payment|bare-${orderId}`,
  orderId,
  docType: 'parked',
  state: 'parked',
  payload: payment(orderId),
  fingerprint: 'f'.repeat(64),
  parkedAt: '2026-11-30T08:00:00Z',
});

/**
 * After the order's batch met the open gate: the gate and the parked items are read, and this is the
 * one batch that applies them (the order with its payment, its outbox entry, the gate closed, the
 * payment's marker, each item applied). Both bare consumers (in process, and through the host) use it.
 */
export async function applyingParked(container: Container, orderId: string): Promise<OperationInput[]> {
  const gate = await container.item(`parking-lot|${orderId}`, orderId).read();
  const { resources } = await container.items
    .query<{ id: string; _etag: string }>({ query: "SELECT * FROM c WHERE c.docType = 'parked' AND c.state = 'parked'" }, { partitionKey: orderId })
    .fetchAll();
  return [
    ...creates({ ...orderDoc(orderId), amountPaid: 1, paymentCount: 1 }, outboxDoc(orderId)),
    { operationType: 'Replace', id: `parking-lot|${orderId}`, resourceBody: gateDoc(orderId, 'closed'), ifMatch: gate.etag },
    ...creates(inboxDoc(orderId)),
    ...resources.map((r): OperationInput => ({
      operationType: 'Replace',
      id: r.id,
      resourceBody: { ...parkedDoc(orderId), state: 'applied', ttl: 3600 },
      ifMatch: r._etag,
    })),
  ];
}

/** `placed(n)`: n orders placed by the consumer itself, as the project's side of the pair prepares them. */
export function bareLoops(container: Container, placed: (n: number) => Promise<string[]>): Readonly<Record<string, (n: number) => Promise<Deliver>>> {
  const bareNewOrder = (orderId: string) => bareBatch(container, orderId, creates(orderDoc(orderId), outboxDoc(orderId), gateDoc(orderId, 'closed')));
  const barePark = async (orderId: string) => {
    await container.item(orderId, orderId).read();
    return bareBatch(container, orderId, creates(parkedDoc(orderId), gateDoc(orderId, 'open')));
  };
  // The order's batch fails on the open gate; the gate and the parked items are read; one batch applies them.
  const bareOrderOverParked = async (orderId: string) => {
    await bareBatch(container, orderId, creates(orderDoc(orderId), outboxDoc(orderId), gateDoc(orderId, 'closed')));
    return bareBatch(container, orderId, await applyingParked(container, orderId));
  };
  const barePayment = async (orderId: string) => {
    const { resource, etag } = await container.item(orderId, orderId).read();
    return bareBatch(container, orderId, [
      ...creates(inboxDoc(orderId)),
      { operationType: 'Replace', id: orderId, resourceBody: { ...resource, amountPaid: 1 }, ifMatch: etag },
    ]);
  };
  // A redelivery reads first: one point read finds the order (or the payment's inbox marker).
  const bareRedeliveredDuplicate = (orderId: string, id = orderId) => container.item(id, orderId).read();
  // A redelivery reads first, finds the other order, and its record batch meets its first delivery's (409).
  const bareConflictRedelivered = async (orderId: string) => {
    await container.item(orderId, orderId).read();
    return bareBatch(
      container,
      orderId,
      creates({ id: `conflict|x-${orderId}`, orderId, docType: 'conflict' }, { id: `rejection|x-${orderId}`, orderId, docType: 'rejection', ttl: 3600 }),
    );
  };
  const bareConflict = async (orderId: string) => {
    await bareBatch(container, orderId, creates(orderDoc(orderId), outboxDoc(orderId)));
    await container.item(orderId, orderId).read();
    return bareBatch(
      container,
      orderId,
      creates({ id: `conflict|x-${orderId}`, orderId, docType: 'conflict' }, { id: `rejection|x-${orderId}`, orderId, docType: 'rejection', ttl: 3600 }),
    );
  };
  return {
    'OrderPlaced, new': async (n) => {
      const o = ids(n);
      return (i) => bareNewOrder(o[i]!);
    },
    'OrderPlaced, duplicate (redelivered)': async (n) => {
      const o = await placed(n);
      return (i) => bareRedeliveredDuplicate(o[i]!);
    },
    'PaymentReceived, new': async (n) => {
      const o = await placed(n);
      return (i) => barePayment(o[i]!);
    },
    'PaymentReceived, duplicate (redelivered)': async (n) => {
      const o = await placed(n);
      await runAll(n, (i) => barePayment(o[i]!));
      return (i) => bareRedeliveredDuplicate(o[i]!, `inbox|bare-${o[i]}`);
    },
    'PaymentReceived, early (parked)': async (n) => {
      const o = ids(n);
      return (i) => barePark(o[i]!);
    },
    'OrderPlaced, one payment parked': async (n) => {
      const o = ids(n);
      await runAll(n, (i) => barePark(o[i]!));
      return (i) => bareOrderOverParked(o[i]!);
    },
    'conflict, first delivery': async (n) => {
      const o = await placed(n);
      return (i) => bareConflict(o[i]!);
    },
    'conflict, each redelivery': async (n) => {
      const o = await placed(n);
      await runAll(n, (i) => bareConflict(o[i]!));
      return (i) => bareConflictRedelivered(o[i]!);
    },
    // What an instance that does not remember the rejection needs: one point read of its record.
    'invalid, each redelivery': async (n) => {
      const o = ids(n);
      await runAll(n, (i) =>
        container.items.create({ id: `rejection|bad-${o[i]}`, orderId: '#rejected', docType: 'rejection', ttl: 3600 }).catch(() => undefined),
      );
      return (i) => container.item(`rejection|bad-${o[i]}`, '#rejected').read();
    },
  };
}
