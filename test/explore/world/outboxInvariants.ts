import type { OutboxDocument } from '../../../src/outbox/index.js';
import type { OutboxScenario } from './outboxScenario.js';
import type { OutboxRun } from './outboxWorld.js';

/**
 * What must hold once the world has run out of work and the sweeper's timer has found nothing
 * pending: one OrderAccepted entry per order; each published, its MessageId on the topic exactly
 * once (copies dropped by duplicate detection), or set aside as `failed` with the broker's reason
 * after the broker refused it; nothing pending; nothing on the topic that no entry sent.
 */
export function checkOutboxAtQuiescence(scenario: OutboxScenario, run: OutboxRun): string[] {
  const violations = run.stuck.map((name) => `${name} never finished: waiting on nothing`);
  const sent = new Set<string>();
  for (const orderId of scenario.orderIds) {
    const entries = run.memory
      .list(orderId)
      .filter((d) => (d as OutboxDocument).docType === 'outbox' && (d as OutboxDocument).eventType === 'OrderAccepted') as OutboxDocument[];
    if (entries.length !== 1) {
      violations.push(`${orderId} has ${entries.length} OrderAccepted outbox entries`);
      continue;
    }
    const entry = entries[0]!;
    const messageId = entry.message.messageId;
    sent.add(messageId);
    const onTopic = run.broker.topic.get(messageId);
    switch (entry.state) {
      case 'pending':
        violations.push(`${orderId}'s entry is still pending after the sweeper found nothing left to publish`);
        break;
      case 'published':
        if (!onTopic) violations.push(`${orderId}'s entry is marked published, but its message ${messageId} never reached the topic`);
        if (!entry.publishedAt) violations.push(`${orderId}'s entry is published with no publishedAt`);
        break;
      case 'failed':
        if (!entry.failure?.reason) violations.push(`${orderId}'s entry is failed with no reason recorded`);
        if (!run.broker.refused.has(messageId))
          violations.push(`${orderId}'s entry is failed (${entry.failure?.reason ?? 'no reason'}), but the broker never refused ${messageId}`);
        break;
    }
    if (onTopic && onTopic.delivered !== 1)
      violations.push(`${messageId} reached the topic's subscribers ${onTopic.delivered} times: duplicate detection was outrun`);
    if (onTopic && JSON.stringify(onTopic.message) !== JSON.stringify(entry.message))
      violations.push(`${messageId} reached the topic with another message than ${orderId}'s entry holds`);
  }
  for (const messageId of run.broker.topic.keys()) if (!sent.has(messageId)) violations.push(`${messageId} reached the topic, and no entry holds it`);
  return violations;
}
