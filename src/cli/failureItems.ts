import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import type { FailureItem } from './failureGroups.js';

/**
 * How each kind of failure becomes a FailureItem: one definition, so `groups` counts and a bulk
 * command's `--group`, `--since` and `--until` pick the same members (the same entity, reason, type
 * and the same instant).
 */
export function deadLetterItem(m: ServiceBusReceivedMessage, entityPath: string): FailureItem {
  return {
    source: 'dead-letter',
    entity: `${entityPath}/$deadletterqueue`,
    reason: m.deadLetterReason ?? '(none)',
    messageType: m.subject ?? '(no subject)',
    at: (m.enqueuedTimeUtc ?? new Date(0)).toISOString(),
    target: String(m.sequenceNumber?.toNumber() ?? ''),
  };
}

export interface ParkedFailureView {
  readonly orderId: string;
  readonly id: string;
  readonly messageType: string;
  readonly parkedAt: string;
  readonly reason?: string;
  readonly rejectedAt?: string;
}

export function parkedItem(p: ParkedFailureView): FailureItem {
  return {
    source: 'parked',
    entity: 'parked',
    reason: p.reason ?? '(none)',
    messageType: p.messageType,
    at: p.rejectedAt ?? p.parkedAt,
    target: `${p.orderId}/${p.id}`,
  };
}

export interface OutboxFailureView {
  readonly orderId: string;
  readonly id: string;
  readonly eventType: string;
  readonly destination: string;
  readonly createdAt: string;
  readonly reason?: string;
}

export function outboxItem(e: OutboxFailureView): FailureItem {
  return {
    source: 'outbox',
    entity: `outbox -> ${e.destination}`,
    reason: e.reason ?? '(none)',
    messageType: e.eventType,
    at: e.createdAt,
    target: `${e.orderId}/${e.id}`,
  };
}
