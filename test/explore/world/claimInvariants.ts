import { fingerprintPayload } from '../../../src/idempotency/index.js';
import type { InMemoryDocumentStore, ProcessingOutcome, StoredDocument } from '../../../src/idempotency/index.js';
import type { InboxMarkerDocument, OrderDocument, PaymentReceived, RejectionDocument } from '../../../src/orders/index.js';
import { addMoney, isExactAmount } from '../../../src/orders/money.js';
import type { ModelMessage, OrderScenario } from './orderScenario.js';
import { orderCurrency, worldNameOf } from './orderScenario.js';
import type { WorldRun } from './orderWorld.js';

const fingerprintOf = (m: ModelMessage): string => fingerprintPayload(m.type, m.body);

/** The same payment as a claim sees it: one paymentId, naming the same order, amount and currency (whatever the key). */
const samePayment = (a: ModelMessage, b: ModelMessage): boolean =>
  a.body.paymentId === b.body.paymentId && a.orderId === b.orderId && a.body.amount === b.body.amount && a.body.currency === b.body.currency;

interface CountedPayment {
  readonly orderId: string;
  readonly marker: InboxMarkerDocument;
}

/** Why a message was not applied, as recorded: its rejection (by MessageId) or its request's parked item's. */
export type ReasonOf = (m: ModelMessage) => string | undefined;

const describePayment = (m: ModelMessage): string =>
  `${worldNameOf(m)} (${String(m.body.paymentId)} for ${m.orderId}, ${String(m.body.amount)} ${String(m.body.currency)}, key ${m.key})`;

/**
 * The payments checked by paymentId, across orders (the payment-claims scenario): a paymentId is
 * counted at most once, on one order; each order's amountPaid is what other payments added plus
 * the distinct payments counted; a marker holds a payload that was sent, for its order, in its
 * currency; every payment not counted is explained (a rejection, its copy's, its parked item's), and
 * every explanation holds against what the store ended with: another currency is another currency,
 * an amount refused past the exact-sum bound still does not fit (amountPaid only grows), a conflict
 * has another payload under the paymentId or the key. A conflict with a claim void all along is the
 * world's oracle (WorldRun.misjudgedClaims), so "the first one's claim decides" is checked as it
 * happened: what was valid then, not what the end state says.
 */
export function checkClaims(scenario: OrderScenario, run: WorldRun, sent: readonly ModelMessage[], reasonOf: ReasonOf): string[] {
  const violations: string[] = [...run.misjudgedClaims];
  const payments = sent.filter((m) => m.type === 'PaymentReceived');
  const counted: CountedPayment[] = [];
  const orders = new Map<string, OrderDocument | undefined>();
  for (const orderId of scenario.orderIds) {
    const all = run.memory.list(orderId) as (StoredDocument & { docType?: string })[];
    const order = all.find((d) => d.docType === 'order') as OrderDocument | undefined;
    orders.set(orderId, order);
    const markers = (all.filter((d) => d.docType === 'inbox') as InboxMarkerDocument[]).filter((mk) => mk.messageType === 'PaymentReceived');
    counted.push(...markers.map((marker) => ({ orderId, marker })));
    violations.push(...checkAmountPaid(orderId, order, markers, run.filled.get(orderId) ?? 0));
    for (const marker of markers) {
      const from = payments.find((m) => m.orderId === orderId && m.key === marker.dedupKey && fingerprintOf(m) === marker.fingerprint);
      if (!from) violations.push(`${orderId} counts ${marker.dedupKey} from a payload that was never sent under that key for it`);
      else if (from.body.currency !== orderCurrency(scenario, orderId)) violations.push(`${orderId} counts ${describePayment(from)}, not in its currency`);
    }
  }
  for (const paymentId of new Set(payments.map((m) => String(m.body.paymentId)))) {
    const holders = counted.filter((c) => (c.marker.payload as PaymentReceived | undefined)?.paymentId === paymentId);
    if (holders.length > 1)
      violations.push(`${paymentId} counted ${holders.length} times: ${holders.map((h) => `on ${h.orderId} under ${h.marker.dedupKey}`).join(', ')}`);
    const applied =
      holders[0] &&
      payments.find((m) => m.orderId === holders[0]!.orderId && m.key === holders[0]!.marker.dedupKey && fingerprintOf(m) === holders[0]!.marker.fingerprint);
    for (const m of payments.filter((p) => p.body.paymentId === paymentId)) {
      if (applied && samePayment(m, applied)) {
        // A copy of the payment counted (another key, or the same request again) is a duplicate: completed, never dead-lettered.
        const fate = run.fates.get(worldNameOf(m));
        if (fate?.deadLettered && (m.key !== applied.key || fingerprintOf(m) === fingerprintOf(applied)))
          violations.push(
            `${describePayment(m)} dead-lettered (${describeDeadLetter(fate.deadLettered)}), though its payment was counted as ${describePayment(applied)}`,
          );
        continue;
      }
      const explained = payments.some((c) => (samePayment(c, m) || (c.key === m.key && fingerprintOf(c) === fingerprintOf(m))) && reasonOf(c) !== undefined);
      if (!explained) violations.push(`${describePayment(m)} neither counted (as ${applied ? describePayment(applied) : 'nothing'}) nor explained`);
    }
  }
  // A MessageId the sender reused names the newest message rejected under it: whose reason it is, the record cannot say.
  const ownMessageId = (m: ModelMessage) => sent.filter((c) => c.messageId === m.messageId).length === 1;
  for (const m of payments.filter(ownMessageId)) violations.push(...checkReason(scenario, m, reasonOf(m), orders.get(m.orderId), payments));
  return violations;
}

function describeDeadLetter(outcome: ProcessingOutcome): string {
  return outcome.kind === 'conflict' || outcome.kind === 'invalid' ? `${outcome.kind} ${outcome.error.code}` : outcome.kind;
}

function checkAmountPaid(orderId: string, order: OrderDocument | undefined, markers: readonly InboxMarkerDocument[], filled: number): string[] {
  if (!order) return markers.length > 0 ? [`${orderId} is not stored, yet ${markers.length} payments are marked applied`] : [];
  const sum = addMoney(filled, ...markers.map((mk) => (mk.payload as PaymentReceived).amount));
  if (order.amountPaid === sum && order.paymentCount === markers.length) return [];
  return [
    `${orderId} has amountPaid ${order.amountPaid} over ${order.paymentCount} payments; other payments (${filled}) and its inbox markers say ${sum} over ${markers.length}`,
  ];
}

/** A recorded reason that the store's end state contradicts. */
function checkReason(
  scenario: OrderScenario,
  m: ModelMessage,
  reason: string | undefined,
  order: OrderDocument | undefined,
  payments: readonly ModelMessage[],
): string[] {
  switch (reason) {
    case 'CurrencyMismatch':
      return m.body.currency === orderCurrency(scenario, m.orderId) ? [`${describePayment(m)} rejected as CurrencyMismatch in its order's currency`] : [];
    case 'AmountOutOfRange':
      return order && isExactAmount(addMoney(order.amountPaid, m.body.amount as number))
        ? [`${describePayment(m)} rejected as AmountOutOfRange, yet ${m.orderId}'s amountPaid ${order.amountPaid} still has room for it`]
        : [];
    case 'PayloadConflict': {
      const rival = payments.some(
        (c) => (c.key === m.key && fingerprintOf(c) !== fingerprintOf(m)) || (c.body.paymentId === m.body.paymentId && !samePayment(c, m)),
      );
      return rival ? [] : [`${describePayment(m)} rejected as a conflict, though no other payload shares its key or paymentId`];
    }
    default:
      return [];
  }
}

/** The reason a message's rejection record (by MessageId) or its request's parked item gives. */
export function reasonFrom(memory: InMemoryDocumentStore, record: RejectionDocument | undefined, m: ModelMessage): string | undefined {
  if (record) return record.reason;
  const item = memory.list(m.orderId).find((d) => {
    const p = d as StoredDocument & { docType?: string; dedupKey?: string; fingerprint?: string; rejection?: unknown };
    return p.docType === 'parked' && p.dedupKey === m.key && p.fingerprint === fingerprintOf(m) && p.rejection !== undefined;
  }) as { rejection: { reason: string } } | undefined;
  return item?.rejection.reason;
}
