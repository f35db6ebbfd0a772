import type { ServiceBusMessage } from '@azure/service-bus';

/** What the sample producer sends, and what the store must hold afterwards if nothing was lost or doubled. */
export interface Workload {
  /** In send order; a message listed twice is a producer retry. */
  readonly sends: ServiceBusMessage[];
  readonly expected: Map<string, { amountPaid: number; status: string; statusVersion: number }>;
  readonly producerRetriesSameId: number;
  readonly producerRetriesNewId: number;
  /** Sent once its order is stored: same order id, different content, new MessageId. */
  readonly conflict: ServiceBusMessage;
  readonly conflictOrderId: string;
  /** Payment MessageIds whose consumer "crashes" after writing, before completing. */
  readonly crashOnFirstDelivery: Set<string>;
}

const statuses = ['Paid', 'Shipped', 'Delivered'] as const;

/**
 * A day in the life of the orders queue: every order placed, paid in two parts and moved through
 * its statuses (some status messages out of order); one send in ten retried by the producer with
 * the same MessageId (the broker drops it), one in twenty retried later with a new MessageId and
 * the original as `idempotency-key` (the consumer absorbs it), a few consumers crashing between
 * the write and the completion, and one order re-sent with different content (a conflict).
 */
export function sampleWorkload(orderCount: number, run: string): Workload {
  const sends: ServiceBusMessage[] = [];
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
    send({ messageId: `placed-${orderId}`, subject: 'OrderPlaced', body: { orderId, customerId: `customer-${i % 13}`, currency: 'EUR', lines, placedAt: new Date().toISOString() } }, i);
    const payments = [10, 2.5];
    payments.forEach((amount, p) => {
      const messageId = `payment-${orderId}-${p}`;
      if (i % 25 === 5 && p === 0) crashOnFirstDelivery.add(messageId);
      send({ messageId, subject: 'PaymentReceived', body: { orderId, paymentId: messageId, amount, currency: 'EUR', receivedAt: new Date().toISOString() } }, i + p);
    });
    const versions = i % 4 === 0 ? [2, 1, 3] : [1, 2, 3];
    for (const version of versions) {
      send(
        { messageId: `status-${orderId}-${version}`, subject: 'OrderStatusChanged', body: { orderId, status: statuses[version - 1], version, changedAt: new Date().toISOString() } },
        i + version,
      );
    }
    expected.set(orderId, { amountPaid: 12.5, status: 'Delivered', statusVersion: 3 });
  }
  const victim = `order-${run}-0000`;
  const conflict: ServiceBusMessage = {
    messageId: `placed-${victim}-edited`,
    subject: 'OrderPlaced',
    body: { orderId: victim, customerId: 'someone-else', currency: 'EUR', lines: [{ sku: 'SKU-X', quantity: 9, unitPrice: 1 }], placedAt: new Date().toISOString() },
  };
  return { sends, expected, producerRetriesSameId, producerRetriesNewId, conflict, conflictOrderId: victim, crashOnFirstDelivery };
}
