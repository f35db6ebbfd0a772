// The bare side of `npm run bench -- --host`: per path, the minimal store work a correct consumer
// needs for the message's effect, straight through @azure/cosmos, with no validation, fingerprint,
// logging or telemetry. `redelivered` is the broker's word that an earlier delivery may have written
// (delivery count above 1): then it reads first. Throwing abandons the delivery, as the app's host does.
import type { Container, OperationInput } from '@azure/cosmos';
import { applyingParked, gateDoc, orderDoc, outboxDoc, parkedDoc } from './bareLoops.js';
import { bareOrderPlaced, barePaymentApplied } from './hostPaths.js';

export type BareWork = (container: Container, messageId: string, body: unknown, redelivered: boolean) => Promise<void>;

/** Refused: abandoned until the broker dead-letters it, as the app does with a conflict or an invalid message. */
export class BareRefusal extends Error {
  override readonly name = 'BareRefusal';
}

const creates = (...docs: object[]): OperationInput[] => docs.map((resourceBody) => ({ operationType: 'Create', resourceBody: resourceBody as never }));
const orderIdOf = (body: unknown): string => String((body as { orderId?: unknown }).orderId);
const conflictRecord = (orderId: string) =>
  creates({ id: `conflict|x-${orderId}`, orderId, docType: 'conflict' }, { id: `rejection|x-${orderId}`, orderId, docType: 'rejection', ttl: 3600 });

async function placeOrReadOrder(container: Container, orderId: string, redelivered: boolean): Promise<void> {
  if (redelivered && (await container.item(orderId, orderId).read()).resource) return;
  await bareOrderPlaced(container, orderId);
}

/** The order's batch meets the open gate (409); the gate and the parked items are read; one batch applies them. */
async function placeOverParked(container: Container, orderId: string): Promise<void> {
  const first = await container.items.batch(creates(orderDoc(orderId), outboxDoc(orderId), gateDoc(orderId, 'closed')), orderId);
  if (first.result?.[0]?.statusCode === 201) return;
  await container.items.batch(await applyingParked(container, orderId), orderId);
}

async function payOrPark(container: Container, orderId: string, redelivered: boolean): Promise<void> {
  if (redelivered && (await container.item(`inbox|bare-${orderId}`, orderId).read()).resource) return;
  const { resource } = await container.item(orderId, orderId).read();
  if (resource) return barePaymentApplied(container, orderId);
  await container.items.batch(creates(parkedDoc(orderId), gateDoc(orderId, 'open')), orderId);
}

/** First delivery: its order's create meets the stored one (409), which is read; the record is written. A redelivery reads, then writes the record (409). */
async function refuseConflict(container: Container, orderId: string, redelivered: boolean): Promise<never> {
  if (!redelivered) await bareOrderPlaced(container, orderId);
  await container.item(orderId, orderId).read();
  await container.items.batch(conflictRecord(orderId), orderId);
  throw new BareRefusal(`order ${orderId} conflicts with the stored one`);
}

/** The body does not parse: the rejection is recorded on the first delivery and read on each redelivery. */
async function refuseInvalid(container: Container, messageId: string, redelivered: boolean): Promise<never> {
  if (redelivered) await container.item(`rejection|${messageId}`, '#rejected').read();
  else await container.items.create({ id: `rejection|${messageId}`, orderId: '#rejected', docType: 'rejection', ttl: 3600 }).catch(() => undefined);
  throw new BareRefusal(`message ${messageId} is not an order`);
}

/** The bare work for one delivery of `path`'s message. */
export function bareWorkFor(path: string): BareWork {
  switch (path) {
    case 'OrderPlaced, new':
    case 'OrderPlaced, duplicate (redelivered)':
      return (container, _id, body, redelivered) => placeOrReadOrder(container, orderIdOf(body), redelivered);
    case 'PaymentReceived, new':
    case 'PaymentReceived, duplicate (redelivered)':
    case 'PaymentReceived, early (parked)':
      return (container, _id, body, redelivered) => payOrPark(container, orderIdOf(body), redelivered);
    case 'OrderPlaced, one payment parked':
      return (container, _id, body) => placeOverParked(container, orderIdOf(body));
    case 'conflict, until dead-lettered':
      return (container, _id, body, redelivered) => refuseConflict(container, orderIdOf(body), redelivered);
    case 'invalid, until dead-lettered':
      return (container, messageId, _body, redelivered) => refuseInvalid(container, messageId, redelivered);
    default:
      throw new Error(`bare host loop: no work for path "${path}"`);
  }
}
