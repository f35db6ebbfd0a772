import type { Container } from '@azure/cosmos';
import type { ServiceBusClient } from '@azure/service-bus';
import { outboxDocumentId } from '../../src/orders/index.js';
import { messageIdFor } from '../../src/outbox/index.js';
import { drainAll } from '../local/drainSubscription.js';
import { loadQueueFile } from '../../emulators/servicebus-emulator/index.js';
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
export async function auditPublishedEvents(
  workload: ChaosWorkload,
  container: Container,
  client: ServiceBusClient,
  subscriptions: readonly string[],
): Promise<EventFindings> {
  const { resources: entries } = await container.items
    .query<{ orderId: string; state: string }>("SELECT c.orderId, c.state FROM c WHERE c.docType = 'outbox'")
    .fetchAll();
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
  return {
    published: entries.filter((e) => e.state === 'published').length,
    failed: entries.filter((e) => e.state === 'failed').length,
    perSubscription,
    problems,
  };
}

/** Everything on the subscription (each session of a session-enabled one), until it has been quiet for two seconds. */
async function receiveAll(client: ServiceBusClient, subscription: string): Promise<Map<string, number>> {
  const sessions = loadQueueFile().topics['order-events']?.subscriptions[subscription]?.requiresSession === true;
  const counts = new Map<string, number>();
  for (const m of await drainAll(client, 'order-events', subscription, sessions, 2000))
    counts.set(String(m.messageId), (counts.get(String(m.messageId)) ?? 0) + 1);
  return counts;
}
