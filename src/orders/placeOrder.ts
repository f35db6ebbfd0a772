import { firstDelivery, pauseAfterLostRace } from '../consumer/index.js';
import type { DeliveryHistory } from '../consumer/index.js';
import { classifyRecord, create, createOrClassify, replace } from '../idempotency/index.js';
import type { ProcessingOutcome } from '../idempotency/index.js';
import { describeRejection, drainParkedItems, findParked, maxBatchOperations, planParkedApplication } from './applyParkedItems.js';
import type { ParkedItemsResult } from './applyParkedItems.js';
import { classifyExistingRecord, outcomeOf, sameRequestAs } from './duplicateOrConflict.js';
import { newOrderAcceptedOutbox, newOrderDocument } from './documents.js';
import type { OrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';
import { parkingLot, parkingLotId } from './parkedItems.js';
import type { ParkingLotDocument } from './parkedItems.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import type { OrderPlaced } from './schemas.js';

/**
 * OrderPlaced: the order document is its own dedup marker. The order, its OrderAccepted outbox entry
 * and its closed arrival gate are created in one transactional batch, so a crash can leave all or
 * none; a second copy of the message gets 409 on the order and is told apart by fingerprint. A 409
 * on the gate alone means payments or status changes came first and are parked: they are read and
 * applied in the same batch as the order (as many as a batch holds; the rest right after).
 *
 * A delivery that may follow an attempt that wrote (src/consumer/deliveryHistory.ts) reads the order first: found,
 * it is told apart by fingerprint exactly as after a 409, in one round trip; not found (the attempt
 * died before its batch, or only an arrival gate is there), the batch runs as on a first delivery.
 * Another copy may store the order between that read and the batch: the batch then meets it (409)
 * and the usual point read decides, one round trip more.
 */
export async function createOrderOrDetectDuplicate(
  message: ParsedOrderMessage & { readonly payload: OrderPlaced },
  ctx: FlowContext,
  delivery: DeliveryHistory = firstDelivery,
): Promise<ProcessingOutcome> {
  const order = newOrderDocument(message.payload, {
    messageId: message.messageId,
    dedupKey: message.key.value,
    fingerprint: message.fingerprint,
    processedAt: ctx.now().toISOString(),
  });
  if (delivery.previousAttemptMayHaveWritten) {
    const stored = await ctx.store.read<OrderDocument>(order.orderId, order.id);
    // Anything but an order under its id is left to the batch and its 409, as on a first delivery.
    if (stored?.document.docType === 'order') return outcomeOf(message, classifyRecord(stored, sameRequestAs(message)), ctx);
  }
  const closedLot = parkingLot(order.orderId, 'closed', order.processedAt, ctx.markerTtlSeconds);
  const operations = [create(order), create(newOrderAcceptedOutbox(order, ctx.orderEventsDestination, message.traceparent)), create(closedLot)];
  const decision = await createOrClassify(ctx.store, order.orderId, operations, sameRequestAs(message));
  if (decision.kind === 'committed') return { kind: 'created' };
  if (decision.kind !== 'not-committed') return outcomeOf(message, decision, ctx);
  const { result } = decision;
  if (result.kind === 'already-exists' && result.operationIndex === 2) return createWithParkedItems(message, order, ctx);
  // An outbox entry without its order means someone deleted the order by hand: let an operator look.
  return { kind: 'retry', reason: `order ${order.orderId}: unexpected ${result.kind} on batch operation ${result.operationIndex}` };
}

async function createWithParkedItems(message: ParsedOrderMessage, fresh: OrderDocument, ctx: FlowContext): Promise<ProcessingOutcome> {
  const orderId = fresh.orderId;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    // The gate first, then the items, never together: the batch below is guarded by the gate's etag,
    // so it can only commit over the items parked up to the gate version read here. An item parked
    // after that read moves the etag and the batch fails (412): read again. Listed first, an item
    // parked between the listing and the gate read would be missed by a batch that still commits.
    // Cosmos DB's Session consistency cannot bring the stale view back between the two calls: the
    // query carries the session token the gate read returned, so it is served at that partition's LSN
    // or later, and an item is parked in the same atomic batch as the gate change it reads here.
    const lot = await ctx.store.read<ParkingLotDocument>(orderId, parkingLotId(orderId));
    // Closed by another copy's batch, which created the order: this copy is its duplicate or conflict.
    if (!lot || lot.document.state === 'closed') return classifyExistingRecord(message, fresh.id, ctx);
    const items = await findParked(orderId, ctx);
    const plan = planParkedApplication(fresh, items, maxBatchOperations - 3, ctx);
    const closed = parkingLot(orderId, 'closed', fresh.processedAt, ctx.markerTtlSeconds);
    const operations = [
      create(plan.order),
      create(newOrderAcceptedOutbox(plan.order, ctx.orderEventsDestination, message.traceparent)),
      replace(closed, lot.etag),
      ...plan.operations,
    ];
    const decision = await createOrClassify(ctx.store, orderId, operations, sameRequestAs(message));
    if (decision.kind === 'committed') {
      const rest = plan.remaining > 0 ? await drainParkedItems(orderId, ctx) : { applied: 0, rejected: [] };
      return createdWith({ applied: plan.applied + rest.applied, rejected: [...plan.rejected, ...rest.rejected] });
    }
    if (decision.kind !== 'not-committed') return outcomeOf(message, decision, ctx);
    // A parker joined (the gate's etag moved) or the sweeper marked an item: read the partition again.
    await pauseAfterLostRace(attempt, ctx);
  }
  return { kind: 'retry', reason: `order ${orderId}'s parked items changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}

function createdWith(result: ParkedItemsResult): ProcessingOutcome {
  return { kind: 'created', appliedParked: result.applied, rejectedParked: result.rejected.map(describeRejection) };
}
