import type { ServiceBusMessage } from '@azure/service-bus';
import { seededRandom } from './chaosWorkload.js';

/** One tick of the flood run: what is sent together, at one instant. */
export interface FloodTick {
  readonly valid: ServiceBusMessage[];
  readonly flood: ServiceBusMessage[];
}

export interface FloodWorkload {
  readonly ticks: FloodTick[];
  /** The valid orders' ids: each must end with its order stored and its one payment applied. */
  readonly validOrderIds: string[];
  /** MessageIds of the invalid messages: each must end dead-lettered. */
  readonly invalidMessageIds: string[];
  /** Order ids the orphans name: orders that never come. */
  readonly orphanOrderIds: string[];
}

export interface FloodWorkloadOptions {
  readonly valid: number;
  readonly flood: number;
  readonly ticks: number;
  readonly seed: number;
  /** Distinguishes this run's (and this phase's) ids in a shared store. */
  readonly prefix: string;
}

const at = '2026-12-01T10:00:00Z';

/**
 * Valid orders (each an OrderPlaced, then its payment) spread evenly over the ticks, and, when
 * `flood` > 0, well-formed abuse spread the same way: a third invalid payments (no amount) under
 * random MessageIds, a third payments and a third status changes for random order ids that never come.
 */
export function floodWorkload(options: FloodWorkloadOptions): FloodWorkload {
  const random = seededRandom(options.seed);
  const token = () => Math.floor(random() * 2 ** 32).toString(36);
  const ticks: FloodTick[] = Array.from({ length: options.ticks }, () => ({ valid: [], flood: [] }));
  const validOrderIds: string[] = [];
  for (let i = 0; i < options.valid; i += 1) {
    const orderId = `${options.prefix}-valid-${String(i).padStart(5, '0')}`;
    validOrderIds.push(orderId);
    ticks[i % options.ticks]?.valid.push(
      {
        messageId: `placed-${orderId}`,
        subject: 'OrderPlaced',
        body: { orderId, customerId: 'c-1', currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: 12.5 }], placedAt: at },
      },
      { messageId: `pay-${orderId}`, subject: 'PaymentReceived', body: { orderId, paymentId: `p-${orderId}`, amount: 25, currency: 'EUR', receivedAt: at } },
    );
  }
  const invalidMessageIds: string[] = [];
  const orphanOrderIds: string[] = [];
  for (let i = 0; i < options.flood; i += 1) {
    const kind = i % 3;
    const orderId = `${options.prefix}-orphan-${token()}`;
    let message: ServiceBusMessage;
    if (kind === 0) {
      const messageId = `${options.prefix}-junk-${token()}`;
      invalidMessageIds.push(messageId);
      message = { messageId, subject: 'PaymentReceived', body: { orderId, paymentId: 'p', currency: 'EUR', receivedAt: at } };
    } else {
      orphanOrderIds.push(orderId);
      message =
        kind === 1
          ? {
              messageId: `${options.prefix}-opay-${token()}`,
              subject: 'PaymentReceived',
              body: { orderId, paymentId: `p-${token()}`, amount: 5, currency: 'EUR', receivedAt: at },
            }
          : { messageId: `${options.prefix}-ostatus-${token()}`, subject: 'OrderStatusChanged', body: { orderId, status: 'Paid', version: 1, changedAt: at } };
    }
    ticks[Math.floor((i * options.ticks) / Math.max(1, options.flood))]?.flood.push(message);
  }
  return { ticks, validOrderIds, invalidMessageIds, orphanOrderIds };
}

/** The p-th percentile (0..100) of a list of numbers, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}
