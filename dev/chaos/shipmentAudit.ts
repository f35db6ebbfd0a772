import type { Container } from '@azure/cosmos';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import type { ChaosWorkload } from './chaosWorkload.js';

export interface ShipmentFindings {
  readonly bookings: number;
  readonly replays: number;
  readonly lookups: number;
  readonly recordsByState: Readonly<Record<string, number>>;
  /** Orders booked twice or never, shipment ids the order does not hold, bookings for no valid order. */
  readonly problems: string[];
}

/**
 * The side effect's half of "exactly once in effect": every validly placed order was booked at the
 * carrier exactly once, whatever was killed between the call and the record, and holds that booking's
 * shipment id; every shipment record ended completed.
 */
export async function auditShipments(workload: ChaosWorkload, container: Container, carrier: CarrierStandIn): Promise<ShipmentFindings> {
  const bookings = carrier.bookings();
  const byOrder = new Map<string, string[]>();
  for (const b of bookings) byOrder.set(b.orderReference, [...(byOrder.get(b.orderReference) ?? []), b.shipmentId]);
  const { resources: orders } = await container.items
    .query<{ orderId: string; shipmentId?: string }>("SELECT c.orderId, c.shipmentId FROM c WHERE c.docType = 'order'")
    .fetchAll();
  const shipped = new Map(orders.map((o) => [o.orderId, o.shipmentId]));
  const { resources: records } = await container.items
    .query<{ orderId: string; state: string }>("SELECT c.orderId, c.state FROM c WHERE c.docType = 'shipment'")
    .fetchAll();
  const problems: string[] = [];
  for (const orderId of workload.expected.keys()) {
    const ids = byOrder.get(orderId) ?? [];
    if (ids.length !== 1) problems.push(`${orderId}: booked ${ids.length} times`);
    else if (shipped.get(orderId) !== ids[0])
      problems.push(`${orderId}: the order holds ${shipped.get(orderId) ?? 'no shipment id'}, the carrier booked ${ids[0]}`);
  }
  for (const orderId of byOrder.keys()) if (!workload.expected.has(orderId)) problems.push(`${orderId}: booked for no valid order`);
  for (const r of records) if (r.state !== 'completed') problems.push(`${r.orderId}: shipment record left ${r.state}`);
  const recordsByState = records.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.state]: (acc[r.state] ?? 0) + 1 }), {});
  const stats = carrier.stats();
  return { bookings: stats.bookings, replays: stats.replays, lookups: stats.lookups, recordsByState, problems };
}
