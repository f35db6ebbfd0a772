import { TransientSendError } from '../../../src/outbox/index.js';
import type { EventSender, OutboxMessage, SendOutcome } from '../../../src/outbox/index.js';
import { never } from './awaitPoints.js';
import type { Actor, AwaitPoints } from './awaitPoints.js';
import type { SendFate } from './outboxScenario.js';

/** Service Bus's default duplicate detection history window (infra/servicebus-queues.json uses the same). */
export const duplicateDetectionWindowSeconds = 600;

/** What reached the topic under one MessageId, and what duplicate detection dropped. */
export interface TopicRecord {
  readonly message: OutboxMessage;
  /** Copies the topic's subscribers received: one per window, as duplicate detection lets through. */
  delivered: number;
  dropped: number;
  lastAcceptedMs: number;
}

/**
 * The broker model: a topic with duplicate detection on MessageId (a copy under a MessageId seen
 * within the window is accepted and dropped, as Azure does: the sender hears success), and a fate
 * per send call: accepted, failed for now, accepted with the answer lost, accepted in part, refused.
 * `senderFor(actor)` is the EventSender one publisher holds: each send is that actor's await point.
 */
export class BrokerModel {
  readonly topic = new Map<string, TopicRecord>();
  /** MessageIds the broker refused at least once: the only reason an entry may end `failed`. */
  readonly refused = new Set<string>();
  private sends = 0;

  constructor(
    private readonly points: AwaitPoints,
    private readonly fates: readonly SendFate[],
    private readonly nowMs: () => number,
  ) {}

  senderFor(actor: Actor): EventSender {
    return {
      send: (destination, messages) => this.send(actor, destination, messages),
      close: async () => undefined,
    };
  }

  private accept(message: OutboxMessage): void {
    const now = this.nowMs();
    const record = this.topic.get(message.messageId);
    if (record && now - record.lastAcceptedMs < duplicateDetectionWindowSeconds * 1000) {
      record.dropped += 1;
      this.points.timeline.count('copy dropped by duplicate detection');
      return;
    }
    if (record) {
      record.delivered += 1;
      record.lastAcceptedMs = now;
    } else this.topic.set(message.messageId, { message, delivered: 1, dropped: 0, lastAcceptedMs: now });
  }

  private async send(actor: Actor, destination: string, messages: readonly OutboxMessage[]): Promise<readonly SendOutcome[]> {
    const label = `send to ${destination} [${messages.map((m) => m.messageId).join(', ')}]`;
    const step = await this.points.pass(actor, label);
    if (step.dies && !step.afterApplying) {
      this.points.die(actor, label);
      return never();
    }
    const fate: SendFate = step.dies ? 'sent' : (this.fates[this.sends] ?? 'sent');
    this.sends += 1;
    const timeline = this.points.timeline;
    timeline.count(`send ${fate}`);
    switch (fate) {
      case 'transient':
        timeline.add(actor.name, `${label} -> FAILED FOR NOW, nothing accepted`);
        throw new TransientSendError(destination, new Error('ServiceBusy'));
      case 'refused':
        for (const m of messages) this.refused.add(m.messageId);
        timeline.add(actor.name, `${label} -> REFUSED (MessagingEntityDisabled)`);
        return messages.map(() => ({ kind: 'refused', reason: 'MessagingEntityDisabled', detail: `${destination} is disabled` }));
      case 'partial':
        if (messages[0]) this.accept(messages[0]);
        timeline.add(actor.name, `${label} -> ${messages[0]?.messageId} accepted, then FAILED FOR NOW`);
        throw new TransientSendError(destination, new Error('the second batch timed out'));
      default:
        for (const m of messages) this.accept(m);
    }
    if (step.dies) {
      timeline.add(actor.name, `${label} -> accepted, but the worker died before hearing it`);
      timeline.count('worker died after its send applied');
      this.points.die(actor, label);
      return never();
    }
    if (fate === 'lost') {
      timeline.add(actor.name, `${label} -> accepted, ANSWER LOST`);
      throw new TransientSendError(destination, new Error('the operation did not complete within the allocated time'));
    }
    timeline.add(actor.name, `${label} -> accepted`);
    return messages.map(() => ({ kind: 'sent' }));
  }
}
