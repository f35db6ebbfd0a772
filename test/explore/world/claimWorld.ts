import type { ServiceBusMessage, ServiceBusSender } from '@azure/service-bus';
import { resubmitParked } from '../../../src/cli/parkedCommands.js';
import type { ParkedContext } from '../../../src/cli/parkedCommands.js';
import { documentId, replace } from '../../../src/idempotency/index.js';
import type { DocumentStore, InMemoryDocumentStore, ProcessingOutcome, StoredDocument } from '../../../src/idempotency/index.js';
import { idempotencyKeyProperty, inboxMarkerId, orderDocumentId, orderNeverArrived } from '../../../src/orders/index.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { addMoney, isExactAmount, maxExactAmount } from '../../../src/orders/money.js';
import type { PaymentClaimDocument } from '../../../src/orders/paymentClaims.js';
import type { Actor, AwaitPoints } from './awaitPoints.js';
import type { ModelMessage, OrderMessageKind } from './orderScenario.js';

/** Where the claim of a paymentId is (src/orders/paymentClaims.ts, no consumer name): read by the world, never written. */
const claimPartition = (paymentId: string): string => `#${documentId('payment', paymentId)}`;

export function claimOf(memory: InMemoryDocumentStore, paymentId: string): PaymentClaimDocument | undefined {
  return memory.list(claimPartition(paymentId)).find((d) => (d as { docType?: string }).docType === 'payment-claim') as PaymentClaimDocument | undefined;
}

/**
 * The claim of the paymentId as it stands, if its holder can never apply it (the model of "void"):
 * its order is stored and refuses the payment for good (another currency: an order's never changes;
 * past the exact-sum bound: amountPaid only grows) and no inbox marker holds its effect. Read in one
 * synchronous step of the in-memory store, so no actor moves in between. A void claim stays void
 * until someone takes it over, so a delivery that starts while it is void, and ends with the claim
 * unchanged, had to take it over: a conflict with it dead-letters a payment the claim no longer holds.
 */
export function voidClaim(memory: InMemoryDocumentStore, paymentId: string): PaymentClaimDocument | undefined {
  const claim = claimOf(memory, paymentId);
  if (!claim) return undefined;
  const partition = memory.list(claim.paymentOrderId);
  const order = partition.find((d) => d.id === orderDocumentId(claim.paymentOrderId)) as OrderDocument | undefined;
  if (!order) return undefined;
  const refuses = order.currency !== claim.currency || !isExactAmount(addMoney(order.amountPaid, claim.amount));
  return refuses && !partition.some((d) => d.id === inboxMarkerId(claim.dedupKey)) ? claim : undefined;
}

/**
 * Other payments of the order (not in the scenario) take its amountPaid to `roomLeft` below the
 * exact-sum bound: one etag-guarded replace on the in-memory store, as a burst of payments applied
 * at this moment would leave it. Returns what it added (0 if the order is not stored yet).
 */
export async function fillOrder(memory: InMemoryDocumentStore, orderId: string, roomLeft: number): Promise<number> {
  for (;;) {
    const order = await memory.read<OrderDocument>(orderId, orderDocumentId(orderId));
    if (!order) return 0;
    const added = addMoney(maxExactAmount, -roomLeft, -order.document.amountPaid);
    if (added <= 0) return 0;
    const filled: OrderDocument = { ...order.document, amountPaid: addMoney(order.document.amountPaid, added) };
    if ((await memory.commit(orderId, [replace(filled, order.etag)])).kind === 'committed') return added;
  }
}

const retention = { markerTtlSeconds: 3600, marginSeconds: 60, marginExplanation: 'the world: a minute' };

/**
 * The operator's `parked resubmit --all --reason OrderNeverArrived`, the real code path against the
 * world's store; its sender puts each copy on the world's queue (the send is an await point of the
 * operator's, between the listing and the item's mark).
 */
export async function operatorResubmit(
  actor: Actor,
  store: DocumentStore,
  points: AwaitPoints,
  nowMs: () => number,
  enqueue: (message: ModelMessage) => void,
): Promise<number> {
  const sender = {
    sendMessages: async (m: ServiceBusMessage) => {
      await points.pass(actor, `send ${String(m.messageId)} to the orders queue`);
      const body = m.body as Record<string, unknown>;
      const key = (m.applicationProperties ?? {})[idempotencyKeyProperty];
      enqueue({ messageId: String(m.messageId), type: m.subject as OrderMessageKind, key: String(key), orderId: String(body.orderId), body });
    },
    close: () => Promise.resolve(),
  } as unknown as ServiceBusSender;
  const ctx: ParkedContext = {
    store,
    sender: () => sender,
    keepSeconds: retention.markerTtlSeconds,
    now: nowMs,
    out: { line: () => undefined, progress: () => undefined },
  };
  const reports = await resubmitParked(ctx, { targets: [], all: true, reason: orderNeverArrived }, false, { retention });
  return reports.filter((r) => r.outcome === 'resubmitted').length;
}

/** The JSON of a document, to tell whether it changed. */
export const snapshot = (document: StoredDocument | undefined): string | undefined => (document === undefined ? undefined : JSON.stringify(document));

/**
 * The claim moves a payment delivery made, for the coverage tally: taking a claim over, going on as
 * the claimer under another key (a copy), being refused or in conflict for a named reason.
 */
export function claimMoves(memory: InMemoryDocumentStore, m: ModelMessage, claimBefore: string | undefined, outcome: ProcessingOutcome): string[] {
  if (m.type !== 'PaymentReceived') return [];
  const claim = claimOf(memory, String(m.body.paymentId));
  const moves: string[] = [];
  if (claimBefore !== undefined && claim && snapshot(claim) !== claimBefore && claim.messageId === m.messageId) moves.push('payment claim taken over');
  if (claim && claim.dedupKey !== m.key && (outcome.kind === 'created' || outcome.kind === 'duplicate' || outcome.kind === 'parked'))
    moves.push('copy under another key went on as the claimer');
  if (outcome.kind === 'conflict' || outcome.kind === 'invalid') moves.push(`${outcome.kind} ${outcome.error.code}`);
  return moves;
}
