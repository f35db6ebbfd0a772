import { randomUUID } from 'node:crypto';

/** Valid sample payloads; each test gets its own order id so tests never share documents. */
export function newOrderId(): string {
  return `o-${randomUUID()}`;
}

export function orderPlaced(orderId: string, overrides: Record<string, unknown> = {}) {
  return {
    orderId,
    customerId: 'c-42',
    currency: 'EUR',
    lines: [
      { sku: 'SKU-1', quantity: 2, unitPrice: 9.99 },
      { sku: 'SKU-2', quantity: 1, unitPrice: 0.1 },
    ],
    placedAt: '2026-11-30T08:00:00Z',
    ...overrides,
  };
}

export function paymentReceived(orderId: string, overrides: Record<string, unknown> = {}) {
  return { orderId, paymentId: `p-${randomUUID()}`, amount: 10.04, currency: 'EUR', receivedAt: '2026-11-30T09:00:00Z', ...overrides };
}

export function orderStatusChanged(orderId: string, version: number, status = 'Shipped') {
  return { orderId, status, version, changedAt: `2026-11-30T10:00:${String(version % 60).padStart(2, '0')}Z` };
}
