import type { Container } from '@azure/cosmos';
import type { CarrierStandIn } from '../emulators/carrier-emulator/carrierStandIn.js';
import type { DeliveryLine, PublishLine } from './chainProcess.js';

/** What the receiving processes reported of one order's messages. */
export interface OrderDeliveries {
  /** When the broker enqueued its OrderPlaced (the first delivery's; every redelivery carries the same). */
  placedEnqueuedAt?: number;
  acceptedEnqueuedAt?: number;
  processOrder: number;
  requestShipment: number;
}

/** What the app's outbox publisher did over a stretch of the run (all zero for the bare chain, which has none). */
export interface PublisherTally {
  invocations: number;
  documents: number;
  entries: number;
  busyMs: number;
}

export const emptyPublisherTally = (): PublisherTally => ({ invocations: 0, documents: 0, entries: 0, busyMs: 0 });

export function recordPublish(tally: PublisherTally, line: PublishLine): void {
  tally.invocations += 1;
  tally.documents += line.documents;
  tally.entries += line.entries;
  tally.busyMs += line.ms;
}

export function recordDelivery(deliveries: Map<string, OrderDeliveries>, line: DeliveryLine): void {
  if (line.orderId === undefined) return;
  const entry = deliveries.get(line.orderId) ?? { processOrder: 0, requestShipment: 0 };
  entry[line.fn] += 1;
  if (line.fn === 'processOrder') entry.placedEnqueuedAt ??= line.enqueuedAt;
  else entry.acceptedEnqueuedAt ??= line.enqueuedAt;
  deliveries.set(line.orderId, entry);
}

/**
 * When each step of one order happened (epoch ms): the client's clock, the documents' own timestamps
 * and the broker's enqueued times, all from this machine's clock (every process runs on it).
 */
export interface OrderTimeline {
  readonly orderId: string;
  readonly sentAt: number;
  /** The intake's claim: `acceptedAt`. */
  readonly acceptedAt: number;
  /** OrderPlaced enqueued on the orders queue (the broker's time, from processOrder's delivery). */
  readonly placedEnqueuedAt: number;
  /** The order: `processedAt` (processOrder's batch). */
  readonly storedAt: number;
  /** OrderAccepted enqueued on the topic (the broker's time, from requestShipment's delivery). */
  readonly acceptedEnqueuedAt: number;
  /** The order: `shipmentBookedAt` (written with the completed shipment record). */
  readonly bookedAt: number;
}

export interface RoundResult {
  readonly timelines: readonly OrderTimeline[];
  /** Answers other than 202, by status. */
  readonly refused: Readonly<Record<string, number>>;
}

export const newOrder = (orderId: string) => ({
  orderId,
  customerId: 'bench',
  currency: 'EUR',
  lines: [{ sku: 'sku-1', quantity: 2, unitPrice: 12.5 }],
  placedAt: '2026-12-01T08:00:00Z',
});

/**
 * Closed loop at the door: `concurrency` clients, each posting its next order as soon as the last one
 * is answered, until all are sent. Each chain then runs at its own limit with the same requests in
 * flight at the intake; what the later stages cannot keep up with waits in the queue or the topic.
 */
export async function submitOrders(
  baseUrl: string,
  orderIds: readonly string[],
  concurrency: number,
): Promise<{ sentAt: Map<string, number>; refused: Record<string, number> }> {
  const sentAt = new Map<string, number>();
  const refused: Record<string, number> = {};
  let next = 0;
  const client = async () => {
    while (next < orderIds.length) {
      const orderId = orderIds[next++] as string;
      sentAt.set(orderId, Date.now());
      const status = await fetch(new URL('api/orders', baseUrl), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `"key-${orderId}"` },
        body: JSON.stringify(newOrder(orderId)),
        signal: AbortSignal.timeout(30_000),
      }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 'no answer',
      );
      if (status !== 202) refused[status] = (refused[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return { sentAt, refused };
}

/** Until the carrier has made `total` bookings since it started; polled in this process, no I/O. */
export async function waitForBookings(carrier: CarrierStandIn, total: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (carrier.stats().bookings < total) {
    if (Date.now() > deadline) throw new Error(`the carrier has ${carrier.stats().bookings} of ${total} bookings after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface TimedDocument {
  readonly orderId: string;
  readonly docType: string;
  readonly acceptedAt?: string;
  readonly processedAt?: string;
  readonly shipmentBookedAt?: string;
}

/**
 * The round's timelines, read back from the documents once every order is booked, and the delivery
 * lines (the booking's write lands just after the carrier's answer, and requestShipment's line after
 * that, so both are read until every order has them).
 */
export async function readTimelines(
  container: Container,
  sentAt: ReadonlyMap<string, number>,
  deliveries: ReadonlyMap<string, OrderDeliveries>,
  timeoutMs: number,
): Promise<OrderTimeline[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const timelines = await timelinesOnce(container, sentAt, deliveries);
    if (timelines.length === sentAt.size) return timelines;
    if (Date.now() > deadline)
      throw new Error(`${sentAt.size - timelines.length} of ${sentAt.size} orders have no complete timeline after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function timelinesOnce(
  container: Container,
  sentAt: ReadonlyMap<string, number>,
  deliveries: ReadonlyMap<string, OrderDeliveries>,
): Promise<OrderTimeline[]> {
  const query = "SELECT c.orderId, c.docType, c.acceptedAt, c.processedAt, c.shipmentBookedAt FROM c WHERE c.docType = 'intake' OR c.docType = 'order'";
  const { resources } = await container.items.query<TimedDocument>(query).fetchAll();
  const byOrder = new Map<string, TimedDocument[]>();
  for (const d of resources) if (sentAt.has(d.orderId)) byOrder.set(d.orderId, [...(byOrder.get(d.orderId) ?? []), d]);
  const at = (value: string | undefined) => (value ? Date.parse(value) : Number.NaN);
  const timelines: OrderTimeline[] = [];
  for (const [orderId, docs] of byOrder) {
    const order = docs.find((d) => d.docType === 'order');
    const timeline: OrderTimeline = {
      orderId,
      sentAt: sentAt.get(orderId) ?? Number.NaN,
      acceptedAt: at(docs.find((d) => d.docType === 'intake')?.acceptedAt),
      placedEnqueuedAt: deliveries.get(orderId)?.placedEnqueuedAt ?? Number.NaN,
      storedAt: at(order?.processedAt),
      acceptedEnqueuedAt: deliveries.get(orderId)?.acceptedEnqueuedAt ?? Number.NaN,
      bookedAt: at(order?.shipmentBookedAt),
    };
    if (Object.values(timeline).every((v) => typeof v === 'string' || Number.isFinite(v))) timelines.push(timeline);
  }
  return timelines;
}
