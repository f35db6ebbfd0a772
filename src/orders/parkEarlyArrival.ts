import { create, createOrClassify, replace } from '../idempotency/index.js';
import type { ExistingRecord, ProcessingOutcome, VanishedRecord, WriteOperation } from '../idempotency/index.js';
import { recordConflict } from './duplicateOrConflict.js';
import { pauseAfterLostRace } from '../consumer/index.js';
import type { FlowContext } from './flowContext.js';
import { newParkedItem, parkingLot, parkingLotId, withState } from './parkedItems.js';
import type { ParkedItemDocument, ParkingLotDocument } from './parkedItems.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import { isSameAsParked } from './sameRequest.js';

/** The order was stored while we looked: apply the message on the order's normal path instead. */
export const orderArrived = Symbol('order-arrived');

/**
 * A payment or status change whose order is not stored: park it in the order's partition and
 * complete the message. The item and the arrival gate change in one batch, and the gate is either
 * created (409 if anyone else did) or replaced by etag (412 if anyone else touched it), so this
 * batch and the order's serialise on the gate: the item is parked before the order's batch reads the
 * partition, or the gate is found closed and the order is there.
 *
 * An item already parked under the same id decides as an inbox marker would: same fingerprint,
 * a duplicate; another, a conflict. A rejected one (`OrderNeverArrived`) that arrives again, from a
 * resubmit or a late copy, is parked afresh with a new horizon.
 */
export async function parkUntilOrderArrives(
  message: ParsedOrderMessage,
  ctx: FlowContext,
  /** Asked again when a gate a release before claims opened moved under us: what decides the message without parking it, if anything. */
  decidedByUnclaimed?: () => Promise<ProcessingOutcome | undefined>,
): Promise<ProcessingOutcome | typeof orderArrived> {
  const orderId = message.payload.orderId;
  const fresh = newParkedItem(message, ctx.now().toISOString(), ctx.markerTtlSeconds);
  let itemEtag: string | undefined;
  let stored: ParkedItemDocument | undefined;
  let lotEtag: string | undefined;
  // A lot this release creates says so; one a release before claims opened stays unmarked when replaced.
  let claimedPaymentsOnly = true;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    // The open gate lives as long as the item it was opened for: an order that never comes leaves nothing behind.
    const openLot = parkingLot(orderId, 'open', fresh.parkedAt, ctx.markerTtlSeconds, claimedPaymentsOnly);
    const operations: WriteOperation[] = [
      itemEtag === undefined ? create(fresh) : replace(fresh, itemEtag),
      lotEtag === undefined ? create(openLot) : replace(openLot, lotEtag),
    ];
    const decision = await createOrClassify(ctx.store, orderId, operations, (item: ParkedItemDocument) => isSameAsParked(message, item));
    if (decision.kind === 'committed') return { kind: 'parked', itemId: fresh.id };
    if (decision.kind !== 'not-committed') {
      const decided = decideAgainstParked(message, decision, ctx);
      if (decided) return decided;
      // Rejected (or claimed by a `parked resubmit`, whose copy this may be) and back, or gone (its ttl ran out): parked afresh over what is there, if anything.
      const existing = decision.kind === 'vanished' ? undefined : decision.existing;
      itemEtag = existing?.etag;
      stored = existing?.document;
      continue;
    }
    const lot = await ctx.store.read<ParkingLotDocument>(orderId, parkingLotId(orderId));
    if (lot?.document.state === 'closed') return itemEtag === undefined ? orderArrived : handBackToOrder(stored ?? fresh, itemEtag, ctx);
    lotEtag = lot?.etag;
    claimedPaymentsOnly = lot === undefined || lot.document.claimedPaymentsOnly === true;
    // Under such a gate, the parker that moved it may be an instance of that release parking a copy of
    // this payment with no claim: parked over it, the order's batch would count both.
    const decided = claimedPaymentsOnly ? undefined : await decidedByUnclaimed?.();
    if (decided) return decided;
    await pauseAfterLostRace(attempt, ctx);
  }
  return { kind: 'retry', reason: `order ${orderId}'s arrival gate changed under ${ctx.maxConcurrencyAttempts} attempts in a row` };
}

function decideAgainstParked(
  message: ParsedOrderMessage,
  decision: ExistingRecord<ParkedItemDocument> | VanishedRecord,
  ctx: FlowContext,
): ProcessingOutcome | undefined {
  if (decision.kind === 'vanished') return undefined;
  const item = decision.existing.document;
  if (decision.kind === 'other-request') return recordConflict(message, item, ctx);
  // Waiting, applied, or discarded by an operator: this copy has nothing more to do.
  if (item.state === 'parked' || item.state === 'applied' || item.state === 'discarded') return { kind: 'duplicate' };
  return undefined;
}

/**
 * A rejected item came back while its order was being stored: the order's batch did not take it
 * (it was not `parked`), so it is marked handed back and the message is applied on the normal path.
 * It is the item as stored (its rejection and when it was parked): this delivery may have lost its
 * lock (another completed the message) and die before applying it, and then that record is the only
 * one of what became of the request.
 */
async function handBackToOrder(item: ParkedItemDocument, etag: string, ctx: FlowContext): Promise<typeof orderArrived> {
  await ctx.store.commit(item.orderId, [replace(withState(item, { state: 'resubmitted', ttl: ctx.markerTtlSeconds }), etag)]);
  return orderArrived;
}
