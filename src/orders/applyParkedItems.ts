import { create, replace } from '../idempotency/index.js';
import type { FailureCode, ParkedItemRejected, VersionedDocument, WriteOperation } from '../idempotency/index.js';
import {
  appliedStatusFingerprint,
  inboxMarkerId,
  newPaymentMarker,
  orderDocumentId,
  paymentCurrencyMismatch,
  paymentOutOfRange,
  withPayment,
  withStatus,
} from './documents.js';
import type { InboxMarkerDocument, OrderDocument } from './documents.js';
import { orderFailure } from './failureCodes.js';
import { pauseAfterLostRace } from '../consumer/index.js';
import type { FlowContext } from './flowContext.js';
import { withState } from './parkedItems.js';
import { versionJump } from './statusVersionStep.js';
import { fingerprintsOfParked } from './sameRequest.js';
import type { ParkedItemDocument } from './parkedItems.js';
import type { OrderStatusChanged, PaymentReceived } from './schemas.js';

/** Cosmos DB runs at most 100 operations in one transactional batch. */
export const maxBatchOperations = 100;

/** A parked item that could not be applied to the order it waited for, with the reason it is listed under. */
export interface ParkedItemRejection {
  readonly item: ParkedItemDocument;
  readonly reason: string;
  readonly description: string;
}

export function describeRejection({ item, reason, description }: ParkedItemRejection): ParkedItemRejected {
  return { id: item.id, orderId: item.orderId, messageType: item.messageType, dedupKey: item.dedupKey, messageId: item.messageId, reason, description };
}

export interface ParkedItemsResult {
  readonly applied: number;
  readonly rejected: readonly ParkedItemRejection[];
}

export interface ParkedApplication extends ParkedItemsResult {
  /** The order with every item of this batch applied. */
  readonly order: OrderDocument;
  /** Inbox markers to create and items to mark, all etag-guarded, for the same batch as the order. */
  readonly operations: readonly WriteOperation[];
  /** Items that did not fit into the batch: applied by a further batch right after. */
  readonly remaining: number;
  /** Which operation indexes (within `operations`) create an inbox marker, and for which item. */
  readonly markerItems: ReadonlyMap<number, string>;
}

/**
 * Applies parked items to an order in memory, oldest first, within `room` batch operations. Payments
 * add up (each with its inbox marker, so a later copy is a duplicate); status changes end at the
 * highest version (the others are marked stale). A payment in another currency is rejected, never
 * counted; so is a status change that contradicts the stored one at the same version.
 */
export function planParkedApplication(
  order: OrderDocument,
  items: readonly VersionedDocument<ParkedItemDocument>[],
  room: number,
  ctx: Pick<FlowContext, 'now' | 'markerTtlSeconds' | 'statusVersionMaxStep'>,
  /** Payments whose inbox marker turned out to exist: the same payment (applied) or another one (a conflict). */
  markerFound: ReadonlyMap<string, 'same' | 'other'> = new Map(),
): ParkedApplication {
  const at = ctx.now().toISOString();
  const operations: WriteOperation[] = [];
  const markerItems = new Map<number, string>();
  const rejected: ParkedItemRejection[] = [];
  let current = order;
  let applied = 0;
  const queue = [...items].sort((a, b) => compareParked(a.document, b.document));
  let taken = 0;
  for (const { document: item, etag } of queue) {
    const needed = item.messageType === 'PaymentReceived' && !markerFound.has(item.id) ? 2 : 1;
    if (operations.length + needed > room) break;
    taken += 1;
    const done = (change: Partial<ParkedItemDocument>): WriteOperation =>
      replace(withState(item, { ...change, appliedAt: at, ttl: ctx.markerTtlSeconds }), etag);
    const reject = (reason: FailureCode, description: string): void => {
      rejected.push({ item, reason, description });
      operations.push(replace(withState(item, { state: 'rejected', rejection: { reason, description, rejectedAt: at }, ttl: ctx.markerTtlSeconds }), etag));
    };
    if (item.messageType === 'PaymentReceived') {
      const payment = item.payload as PaymentReceived;
      const found = markerFound.get(item.id);
      const otherCurrency = paymentCurrencyMismatch(current, payment);
      const outOfRange = paymentOutOfRange(current, payment);
      if (found === 'same') {
        operations.push(done({ state: 'applied', appliedAs: 'payment' }));
        applied += 1;
      } else if (found === 'other') {
        const description = `PaymentReceived ${item.dedupKey} for order ${current.orderId} differs from the payment already applied under that key`;
        reject('PayloadConflict', description);
      } else if (otherCurrency !== undefined) {
        reject(orderFailure.CurrencyMismatch, otherCurrency);
      } else if (outOfRange !== undefined) {
        reject(orderFailure.AmountOutOfRange, outOfRange);
      } else {
        current = withPayment(current, payment, item.claimed === true);
        markerItems.set(operations.length, item.id);
        operations.push(create(newPaymentMarker({ ...item, payload: payment }, at, ctx.markerTtlSeconds)));
        operations.push(done({ state: 'applied', appliedAs: 'payment' }));
        applied += 1;
      }
      continue;
    }
    const change = item.payload as OrderStatusChanged;
    const appliedAtVersion = appliedStatusFingerprint(current, change.version);
    if (change.version <= current.statusVersion && appliedAtVersion !== undefined && !fingerprintsOfParked(item).includes(appliedAtVersion)) {
      const description =
        `OrderStatusChanged version ${change.version} for order ${current.orderId} differs from the stored one` +
        ` (message ${(change.version === current.statusVersion ? current.statusMessageId : undefined) ?? 'unknown'}, fingerprint ${appliedAtVersion}; this one ${item.fingerprint})`;
      reject('PayloadConflict', description);
      continue;
    }
    const jump = versionJump(change, current.statusVersion, ctx);
    if (jump !== undefined) {
      reject(orderFailure.VersionJump, jump);
      continue;
    }
    if (change.version > current.statusVersion) {
      current = withStatus(current, change, { fingerprint: item.fingerprint, messageId: item.messageId });
      operations.push(done({ state: 'applied', appliedAs: 'status' }));
    } else {
      operations.push(done({ state: 'applied', appliedAs: 'stale' }));
    }
    applied += 1;
  }
  return { order: current, operations, applied, rejected, remaining: queue.length - taken, markerItems };
}

/**
 * Applies whatever is still parked for an order that is stored: the rest of a batch that did not fit,
 * or what a crash between batches left. Each batch replaces the order by etag, so it never races a
 * payment applied meanwhile; a 409 on an inbox marker means that payment's copy was applied on the
 * order's normal path already, and the item is only marked.
 */
export async function drainParkedItems(orderId: string, ctx: FlowContext): Promise<ParkedItemsResult> {
  let applied = 0;
  const rejected: ParkedItemRejection[] = [];
  const markerFound = new Map<string, 'same' | 'other'>();
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts * 10; attempt += 1) {
    const order = await ctx.store.read<OrderDocument>(orderId, orderDocumentId(orderId));
    if (!order) break;
    const items = await findParked(orderId, ctx);
    if (items.length === 0) break;
    let plan = planParkedApplication(order.document, items, maxBatchOperations - 1, ctx, markerFound);
    // A payment refused as past the exact-sum bound may be one whose own effect filled the order (its
    // redelivery or a copy counted it on the normal path while it waited): its marker decides first.
    if (await markersOfRefusedPayments(orderId, plan.rejected, ctx, markerFound))
      plan = planParkedApplication(order.document, items, maxBatchOperations - 1, ctx, markerFound);
    const result = await ctx.store.commit(orderId, [replace(plan.order, order.etag), ...plan.operations]);
    if (result.kind === 'committed') {
      applied += plan.applied;
      rejected.push(...plan.rejected);
      if (plan.remaining === 0) break;
      continue;
    }
    const itemId = result.kind === 'already-exists' ? plan.markerItems.get(result.operationIndex - 1) : undefined;
    const item = items.find((i) => i.document.id === itemId)?.document;
    if (item) {
      await noteMarker(orderId, item, ctx, markerFound);
    } else {
      await pauseAfterLostRace(Math.min(attempt, 10), ctx);
    }
  }
  return { applied, rejected };
}

/**
 * Reads the inbox marker of each payment the plan refused as AmountOutOfRange and notes what it holds
 * (markerFound); true when it found one. The plan only learns of a marker from a 409 on its create,
 * and a refused payment creates none, so a payment already counted would be refused though applied.
 */
async function markersOfRefusedPayments(
  orderId: string,
  rejected: readonly ParkedItemRejection[],
  ctx: FlowContext,
  markerFound: Map<string, 'same' | 'other'>,
): Promise<boolean> {
  let found = false;
  for (const { item, reason } of rejected) {
    if (reason === orderFailure.AmountOutOfRange && !markerFound.has(item.id) && (await noteMarker(orderId, item, ctx, markerFound))) found = true;
  }
  return found;
}

/** Notes whether the payment's inbox marker holds this item (the same request) or another payload; false when there is none. */
async function noteMarker(orderId: string, item: ParkedItemDocument, ctx: FlowContext, markerFound: Map<string, 'same' | 'other'>): Promise<boolean> {
  const marker = await ctx.store.read<InboxMarkerDocument>(orderId, inboxMarkerId(item.dedupKey));
  if (marker) markerFound.set(item.id, fingerprintsOfParked(item).includes(marker.document.fingerprint) ? 'same' : 'other');
  return marker !== undefined;
}

export function findParked(orderId: string, ctx: FlowContext): Promise<VersionedDocument<ParkedItemDocument>[]> {
  return ctx.store.find<ParkedItemDocument>({ docType: 'parked', partitionKey: orderId, equals: { state: 'parked' } });
}

/** Status changes first, highest version first (the rest are then stale); payments in the order they came. */
function compareParked(a: ParkedItemDocument, b: ParkedItemDocument): number {
  if (a.messageType !== b.messageType) return a.messageType === 'OrderStatusChanged' ? -1 : 1;
  if (a.messageType === 'OrderStatusChanged') return (b.payload as OrderStatusChanged).version - (a.payload as OrderStatusChanged).version;
  if (a.parkedAt !== b.parkedAt) return a.parkedAt < b.parkedAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
