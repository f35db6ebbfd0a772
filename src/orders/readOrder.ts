import { setTimeout as sleep } from 'node:timers/promises';
import type { VersionedDocument } from '../idempotency/index.js';
import { orderDocumentId } from './documents.js';
import type { OrderDocument } from './documents.js';
import type { FlowContext } from './flowContext.js';

/**
 * Reads the order a payment or status change refers to. When it is not stored yet (its OrderPlaced
 * overtook by another consumer, or still queued), waits a little before giving up: an abandoned
 * message comes back at once, so without a pause a burst of redeliveries could spend the queue's
 * whole maxDeliveryCount within milliseconds and dead-letter a message that only came early.
 */
export async function readOrderAllowingLateArrival(orderId: string, ctx: FlowContext): Promise<VersionedDocument<OrderDocument> | undefined> {
  let waitedMs = 0;
  for (let pauseMs = 100; ; pauseMs *= 2) {
    const order = await ctx.store.read<OrderDocument>(orderId, orderDocumentId(orderId));
    if (order || waitedMs >= ctx.orderArrivalWaitMs) return order;
    const pause = Math.min(pauseMs, ctx.orderArrivalWaitMs - waitedMs);
    await sleep(pause);
    waitedMs += pause;
  }
}
