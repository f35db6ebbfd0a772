import type { BulkFilter } from './bulkFilter.js';

/** A dead-lettered message as the tool sees it (a subset of ServiceBusReceivedMessage). */
export interface DeadLetteredMessage {
  readonly sequenceNumber: number;
  readonly messageId?: string;
  /** For a delayed-retry copy (`<MessageId>~retry-<n>`), the MessageId of the message it retries. */
  readonly retryOf?: string;
  readonly deadLetterReason?: string;
  readonly deadLetterErrorDescription?: string;
  readonly deliveryCount?: number;
  readonly enqueuedTimeUtc?: Date;
  readonly body: unknown;
}

export interface Selection {
  /** Sequence numbers or MessageIds; empty with `all` (or a bulk filter) for "every message that passes the filters". */
  readonly targets: readonly string[];
  readonly all: boolean;
  readonly reason?: string;
  readonly olderThanMs?: number;
  readonly newerThanMs?: number;
  readonly bodyContains?: string;
  /** `--group`, `--since`, `--until`, `--max` (applied where the entity is known: dlqCommands). */
  readonly bulk?: BulkFilter;
}

/** Which dead-lettered messages a command acts on. Filters always apply; targets narrow further. */
export function isSelected(message: DeadLetteredMessage, selection: Selection, nowMs: number): boolean {
  if (!selection.all && selection.targets.length > 0 && !matchesTarget(message, selection.targets)) return false;
  if (selection.reason !== undefined && message.deadLetterReason?.toLowerCase() !== selection.reason.toLowerCase()) return false;
  const ageMs = message.enqueuedTimeUtc ? nowMs - message.enqueuedTimeUtc.getTime() : undefined;
  if (selection.olderThanMs !== undefined && (ageMs === undefined || ageMs < selection.olderThanMs)) return false;
  if (selection.newerThanMs !== undefined && (ageMs === undefined || ageMs > selection.newerThanMs)) return false;
  if (selection.bodyContains !== undefined && !bodyText(message.body).includes(selection.bodyContains)) return false;
  return true;
}

/** True when the selection names nothing: no targets, no --all, no filter. Commands refuse to guess. */
export function isEmptySelection(selection: Selection): boolean {
  const bulk = selection.bulk;
  const bulkFiltered = bulk !== undefined && (bulk.groupId !== undefined || bulk.sinceMs !== undefined || bulk.untilMs !== undefined);
  return (
    !selection.all &&
    selection.targets.length === 0 &&
    selection.reason === undefined &&
    selection.olderThanMs === undefined &&
    selection.newerThanMs === undefined &&
    selection.bodyContains === undefined &&
    !bulkFiltered
  );
}

function matchesTarget(message: DeadLetteredMessage, targets: readonly string[]): boolean {
  // A delayed-retry copy answers to its original's MessageId too: that is the one an operator knows.
  return targets.some((t) => t === String(message.sequenceNumber) || t === message.messageId || t === message.retryOf);
}

export function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  // A decoded body reaches here only within the depth bound (bodyForTool).
  return JSON.stringify(body) ?? '';
}
