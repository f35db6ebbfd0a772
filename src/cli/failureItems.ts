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
    reason: bounded(m.deadLetterReason ?? '(none)'),
    messageType: bounded(m.subject ?? '(no subject)'),
    at: (m.enqueuedTimeUtc ?? new Date(0)).toISOString(),
    target: String(m.sequenceNumber?.toNumber() ?? ''),
  };
}

/** A reason or a subject is a group's name, not a payload: a sender's 64 KiB of it is cut (the cut text is the group key too). */
const maxNameChars = 128;

function bounded(text: string): string {
  if (text.length <= maxNameChars) return text;
  // Never half a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(maxNameChars - 2)) ? maxNameChars - 2 : maxNameChars - 1;
  return `${text.slice(0, end)}…`;
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
