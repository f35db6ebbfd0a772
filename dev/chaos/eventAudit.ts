import type { Container } from '@azure/cosmos';
import type { ServiceBusClient } from '@azure/service-bus';
import { outboxDocumentId } from '../../src/orders/index.js';
import { messageIdFor } from '../../src/outbox/index.js';
import type { ChaosWorkload } from './chaosWorkload.js';

export interface EventFindings {
  readonly published: number;
  readonly failed: number;
  readonly perSubscription: readonly { subscription: string; received: number; distinct: number }[];
  /** Orders whose event is missing or came twice on some subscription, entries not published, events nobody expected. */
  readonly problems: string[];
}

/**
 * The outbox's half of "exactly once in effect": every validly placed order has its OrderAccepted
 * entry published, and each subscription received that event exactly once, whatever was killed
 * between the publisher's send and its mark (duplicate detection drops the re-sends).
 */
export async function auditPublishedEvents(workload: ChaosWorkload, container: Container, client: ServiceBusClient, subscriptions: readonly string[]): Promise<EventFindings> {
  const { resources: entries } = await container.items.query<{ orderId: string; state: string }>("SELECT c.orderId, c.state FROM c WHERE c.docType = 'outbox'").fetchAll();
  const problems = entries.filter((e) => e.state !== 'published').map((e) => `${e.orderId}: outbox entry left ${e.state}`);
  const expected = new Map([...workload.expected.keys()].map((orderId) => [messageIdFor(outboxDocumentId(orderId)), orderId]));
  const perSubscription = [];
  for (const subscription of subscriptions) {
    const counts = await receiveAll(client, subscription);
    for (const [messageId, orderId] of expected) {
      const n = counts.get(messageId) ?? 0;
      if (n !== 1) problems.push(`${orderId}: OrderAccepted ${n} times on ${subscription}`);
    }
    for (const messageId of counts.keys()) if (!expected.has(messageId)) problems.push(`${messageId}: an event on ${subscription} for no valid order`);
    perSubscription.push({ subscription, received: [...counts.values()].reduce((a, b) => a + b, 0), distinct: counts.size });
  }
  return { published: entries.filter((e) => e.state === 'published').length, failed: entries.filter((e) => e.state === 'failed').length, perSubscription, problems };
}

/** Everything on the subscription, until it has been quiet for two seconds. */
async function receiveAll(client: ServiceBusClient, subscription: string): Promise<Map<string, number>> {
  const receiver = client.createReceiver('order-events', subscription, { receiveMode: 'receiveAndDelete' });
  const counts = new Map<string, number>();
  try {
    for (;;) {
      const batch = await receiver.receiveMessages(500, { maxWaitTimeInMs: 2000 });
      if (batch.length === 0) return counts;
      for (const m of batch) counts.set(String(m.messageId), (counts.get(String(m.messageId)) ?? 0) + 1);
    }
  } finally {
    await receiver.close();
  }
}
