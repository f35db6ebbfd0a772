import type { Container } from '@azure/cosmos';
import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { CosmosDocumentStore } from '../../src/cosmos/index.js';
import { findRejectionRecord } from '../../src/orders/index.js';
import type { ChaosWorkload } from './chaosWorkload.js';

export interface AuditFindings {
  readonly doubleEffects: string[];
  readonly lostEffects: string[];
  readonly unexpectedOrders: string[];
  readonly validDeadLettered: string[];
  readonly rejectionsMissing: string[];
  readonly wrongReasons: string[];
  /** Early arrivals by state at the end: every one must be applied, none still parked or rejected. */
  readonly parkedByState: Record<string, number>;
}

/** Compares what the store and the dead-letter queue hold with what the workload says they must. */
export async function auditChaosRun(workload: ChaosWorkload, container: Container, deadLettered: readonly ServiceBusReceivedMessage[]): Promise<AuditFindings> {
  const { resources: orders } = await container.items
    .query<{ orderId: string; amountPaid: number; paymentCount: number; status: string; statusVersion: number }>(
      "SELECT c.orderId, c.amountPaid, c.paymentCount, c.status, c.statusVersion FROM c WHERE c.docType = 'order'",
    )
    .fetchAll();
  const found = new Map(orders.map((o) => [o.orderId, o]));
  const doubleEffects: string[] = [];
  const lostEffects: string[] = [];
  for (const [orderId, want] of workload.expected) {
    const got = found.get(orderId);
    if (!got) {
      lostEffects.push(`${orderId}: no order document`);
      continue;
    }
    if (got.paymentCount > want.paymentCount || got.amountPaid > want.amountPaid)
      doubleEffects.push(`${orderId}: ${got.paymentCount} payments, ${got.amountPaid} paid (want ${want.paymentCount}, ${want.amountPaid})`);
    if (got.paymentCount < want.paymentCount || got.amountPaid < want.amountPaid)
      lostEffects.push(`${orderId}: ${got.paymentCount} payments, ${got.amountPaid} paid (want ${want.paymentCount}, ${want.amountPaid})`);
    if (got.statusVersion !== want.statusVersion || got.status !== want.status)
      lostEffects.push(`${orderId}: status ${got.status} v${got.statusVersion} (want ${want.status} v${want.statusVersion})`);
  }
  const unexpectedOrders = orders.map((o) => o.orderId).filter((id) => !workload.expected.has(id));
  const { resources: parked } = await container.items
    .query<{ orderId: string; id: string; state: string }>("SELECT c.orderId, c.id, c.state FROM c WHERE c.docType = 'parked'")
    .fetchAll();
  const parkedByState: Record<string, number> = {};
  for (const item of parked) {
    parkedByState[item.state] = (parkedByState[item.state] ?? 0) + 1;
    if (item.state !== 'applied') lostEffects.push(`${item.orderId}: early arrival ${item.id} left ${item.state}`);
  }

  const wanted = new Map(workload.rejections.map((r) => [r.messageId, r.reason]));
  const rootOf = (m: ServiceBusReceivedMessage) => String(m.applicationProperties?.['retry-of'] ?? m.messageId);
  const validDeadLettered = deadLettered.filter((m) => !wanted.has(rootOf(m))).map((m) => `${String(m.messageId)} (${m.deadLetterReason ?? '?'})`);
  const present = new Map(deadLettered.map((m) => [rootOf(m), String(m.messageId)]));
  const rejectionsMissing = [...wanted.keys()].filter((id) => !present.has(id));
  const store = new CosmosDocumentStore(container);
  const wrongReasons: string[] = [];
  for (const [messageId, reason] of wanted) {
    // The dead-lettered message may be a delayed-retry copy (its rejection could not be recorded
    // during the outage): its reason is recorded under its own MessageId, where the tool looks.
    const deadLetteredId = present.get(messageId) ?? messageId;
    const record = await findRejectionRecord(store, deadLetteredId, orderIdOf(workload, messageId));
    if (record?.reason !== reason) wrongReasons.push(`${deadLetteredId}: recorded ${record?.reason ?? 'nothing'}, want ${reason}`);
  }
  return { doubleEffects, lostEffects, unexpectedOrders, validDeadLettered, rejectionsMissing, wrongReasons, parkedByState };
}

function orderIdOf(workload: ChaosWorkload, messageId: string): string | undefined {
  const conflict = workload.conflicts.find((m) => m.messageId === messageId);
  return (conflict?.body as { orderId?: string } | undefined)?.orderId;
}
