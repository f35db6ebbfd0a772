import { randomUUID } from 'node:crypto';
import { messageTimeToLiveMs } from './messageEntity.js';
import type { AmqpMessage, TopicSettings } from './entityTypes.js';
import type { AcceptResult, MessageEntity } from './messageEntity.js';
import { applyRuleAction } from './ruleActions.js';
import { filterMatches } from './subscriptionRules.js';
import type { SubscriptionRule } from './subscriptionRules.js';

export interface TopicSubscription {
  readonly name: string;
  readonly entity: MessageEntity;
  /** In the order they were added; changed through the subscription's `$management` (rule manager). */
  rules: readonly SubscriptionRule[];
}

const scheduledEnqueueTimeAnnotation = 'x-opt-scheduled-enqueue-time';

/**
 * A topic: it holds nothing itself. A send is checked against the topic's duplicate detection, then
 * copied into every subscription whose rules match (each subscription is a queue of its own, with
 * its lock, delivery limit and dead-letter queue). A message no rule matches is accepted and goes
 * nowhere, as in Service Bus. A scheduled send is held by each matching subscription until due,
 * under one topic-level sequence number that cancels all of them.
 */
export class TopicEntity {
  readonly subscriptions = new Map<string, TopicSubscription>();
  duplicatesDropped = 0;
  private readonly seenMessageIds = new Map<string, number>();
  private lastSequenceNumber = 0;
  private readonly scheduledCopies = new Map<number, { entity: MessageEntity; sequenceNumber: number }[]>();

  constructor(
    readonly name: string,
    readonly settings: TopicSettings,
  ) {}

  addSubscription(subscription: TopicSubscription): void {
    this.subscriptions.set(subscription.name.toLowerCase(), subscription);
  }

  accept(sent: AmqpMessage): AcceptResult {
    const message =
      sent.message_id === undefined || sent.message_id === null || sent.message_id === '' ? { ...sent, message_id: randomUUID().replace(/-/g, '') } : sent;
    if (this.isDuplicate(String(message.message_id), Date.now())) return { kind: 'duplicate' };
    const sequenceNumber = ++this.lastSequenceNumber;
    const ttl = Math.min(messageTimeToLiveMs(message), this.settings.defaultMessageTimeToLiveMs);
    const copy = Number.isFinite(ttl) ? { ...message, ttl } : message;
    const copies: { entity: MessageEntity; sequenceNumber: number }[] = [];
    for (const subscription of this.subscriptions.values()) {
      for (const delivered of subscriptionCopies(subscription.rules, copy)) {
        const result = subscription.entity.accept(delivered);
        if (result.kind === 'enqueued') copies.push({ entity: subscription.entity, sequenceNumber: result.sequenceNumber });
      }
    }
    if (message.message_annotations?.[scheduledEnqueueTimeAnnotation] !== undefined) this.scheduledCopies.set(sequenceNumber, copies);
    return { kind: 'enqueued', sequenceNumber };
  }

  schedule(message: AmqpMessage, atMs: number): number | undefined {
    const annotations = { ...(message.message_annotations ?? {}), [scheduledEnqueueTimeAnnotation]: new Date(atMs) };
    const result = this.accept({ ...message, message_annotations: annotations });
    return result.kind === 'enqueued' ? result.sequenceNumber : undefined;
  }

  cancelScheduled(sequenceNumber: number): void {
    for (const copy of this.scheduledCopies.get(sequenceNumber) ?? []) copy.entity.cancelScheduled(copy.sequenceNumber);
    this.scheduledCopies.delete(sequenceNumber);
  }

  private isDuplicate(id: string, nowMs: number): boolean {
    const windowMs = this.settings.duplicateDetectionWindowMs;
    if (windowMs <= 0) return false;
    for (const [seen, atMs] of this.seenMessageIds) {
      if (atMs > nowMs - windowMs) break;
      this.seenMessageIds.delete(seen);
    }
    if (this.seenMessageIds.has(id)) {
      this.duplicatesDropped += 1;
      return true;
    }
    this.seenMessageIds.set(id, nowMs);
    return false;
  }
}

/**
 * What one subscription gets of a message, as Service Bus does it: the matching rules without an
 * action together give one copy; each matching rule with an action gives a copy of its own, changed
 * by the action and carrying the rule's name as the `RuleName` property.
 */
export function subscriptionCopies(rules: readonly SubscriptionRule[], message: AmqpMessage): AmqpMessage[] {
  const matching = rules.filter((rule) => filterMatches(rule.filter, message));
  const copies: AmqpMessage[] = matching.some((rule) => rule.action === undefined) ? [message] : [];
  for (const rule of matching) {
    if (rule.action === undefined) continue;
    const changed = applyRuleAction(rule.action, message);
    copies.push({ ...changed, application_properties: { ...((changed.application_properties ?? {}) as Record<string, unknown>), RuleName: rule.name } });
  }
  return copies;
}
