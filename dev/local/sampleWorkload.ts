import { randomBytes } from 'node:crypto';
import type { ServiceBusMessage } from '@azure/service-bus';

/** An order submitted through POST /api/orders, and how its client retries it. */
export interface Placement {
  readonly orderId: string;
  readonly idempotencyKey: string;
  readonly body: Record<string, unknown>;
  /**
   * `concurrent`: a second copy sent while the first is in flight (a client that timed out too
   * soon); `after-answer`: sent again once answered (the answer was lost on the way back).
   */
  readonly clientRetry: 'none' | 'concurrent' | 'after-answer';
  /** The W3C trace id the client sends (traceparent): the order's one trace, from the request to the carrier. */
  readonly traceId: string;
}

/** What the sample producer sends, and what the store must hold afterwards if nothing was lost or doubled. */
export interface Workload {
  /** Every order, through the HTTP intake. */
  readonly placements: Placement[];
  /** Payments and status changes, on the queue in send order; a message listed twice is a producer retry. */
  readonly sends: ServiceBusMessage[];
  readonly expected: Map<string, { amountPaid: number; status: string; statusVersion: number }>;
  readonly producerRetriesSameId: number;
  readonly producerRetriesNewId: number;
  readonly clientRetriesConcurrent: number;
  readonly clientRetriesAfterAnswer: number;
  /** Sent once its order is stored: same order id, different content, new MessageId. */
  readonly conflict: ServiceBusMessage;
  readonly conflictOrderId: string;
  /** Payment MessageIds whose consumer "crashes" after writing, before completing. */
  readonly crashOnFirstDelivery: Set<string>;
}

const statuses = ['Paid', 'Shipped', 'Delivered'] as const;

/**
 * A day in the life of the orders service: every order placed over HTTP (one in ten sent twice at
 * once, one in twenty sent again after its answer, each with its one Idempotency-Key), paid in two
 * parts and moved through its statuses on the queue (some status messages out of order, many
 * before their order: they are parked); one send in ten retried by the producer with
 * the same MessageId (the broker drops it), one in twenty retried later with a new MessageId and
 * the original as `idempotency-key` (the consumer absorbs it), a few consumers crashing between
 * the write and the completion, and one order re-sent with different content (a conflict).
 */
export function sampleWorkload(orderCount: number, run: string): Workload {
  const sends: ServiceBusMessage[] = [];
  const placements: Placement[] = [];
  const expected = new Map<string, { amountPaid: number; status: string; statusVersion: number }>();
  const crashOnFirstDelivery = new Set<string>();
  let producerRetriesSameId = 0;
  let producerRetriesNewId = 0;
  const send = (message: ServiceBusMessage, index: number) => {
    sends.push(message);
    if (index % 10 === 3) {
      sends.push(message);
      producerRetriesSameId += 1;
    } else if (index % 20 === 7) {
      sends.push({ ...message, messageId: `${String(message.messageId)}-retry`, applicationProperties: { 'idempotency-key': String(message.messageId) } });
      producerRetriesNewId += 1;
    }
  };
  for (let i = 0; i < orderCount; i += 1) {
    const orderId = `order-${run}-${String(i).padStart(4, '0')}`;
    const lines = [{ sku: `SKU-${i % 7}`, quantity: 1 + (i % 3), unitPrice: 12.5 }];
    placements.push({
      orderId,
      idempotencyKey: `key-${orderId}`,
      body: { orderId, customerId: `customer-${i % 13}`, currency: 'EUR', lines, placedAt: new Date().toISOString() },
      clientRetry: i % 10 === 3 ? 'concurrent' : i % 20 === 7 ? 'after-answer' : 'none',
      traceId: randomBytes(16).toString('hex'),
    });
    const payments = [10, 2.5];
    payments.forEach((amount, p) => {
      const messageId = `payment-${orderId}-${p}`;
      if (i % 25 === 5 && p === 0) crashOnFirstDelivery.add(messageId);
      send(
        { messageId, subject: 'PaymentReceived', body: { orderId, paymentId: messageId, amount, currency: 'EUR', receivedAt: new Date().toISOString() } },
        i + p,
      );
    });
    const versions = i % 4 === 0 ? [2, 1, 3] : [1, 2, 3];
    for (const version of versions) {
      send(
        {
          messageId: `status-${orderId}-${version}`,
          subject: 'OrderStatusChanged',
          body: { orderId, status: statuses[version - 1], version, changedAt: new Date().toISOString() },
        },
        i + version,
      );
    }
    expected.set(orderId, { amountPaid: 12.5, status: 'Delivered', statusVersion: 3 });
  }
  const victim = `order-${run}-0000`;
  const conflict: ServiceBusMessage = {
    messageId: `placed-${victim}-edited`,
    subject: 'OrderPlaced',
    body: {
      orderId: victim,
      customerId: 'someone-else',
      currency: 'EUR',
      lines: [{ sku: 'SKU-X', quantity: 9, unitPrice: 1 }],
      placedAt: new Date().toISOString(),
    },
  };
  const clientRetriesConcurrent = placements.filter((p) => p.clientRetry === 'concurrent').length;
  const clientRetriesAfterAnswer = placements.filter((p) => p.clientRetry === 'after-answer').length;
  return {
    placements,
    sends,
    expected,
    producerRetriesSameId,
    producerRetriesNewId,
    clientRetriesConcurrent,
    clientRetriesAfterAnswer,
    conflict,
    conflictOrderId: victim,
    crashOnFirstDelivery,
  };
}
