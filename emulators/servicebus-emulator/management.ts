import rhea from 'rhea';
import { deadLetterInDeadLetterQueue } from './amqpLinks.js';
import { uuidBytes, uuidText } from './lockTokens.js';
import { standardMaxMessageSizeBytes } from './queueDefinitions.js';
import { sessionIdOf } from './messageEntity.js';
import type { AmqpMessage } from './entityTypes.js';
import type { MessageEntity, Settlement } from './messageEntity.js';
import { decodeMessage, encodeMessage, sequenceNumberOf, toWireMessage } from './wireMessages.js';

const { types } = rhea;

export interface ManagementReply {
  readonly status: number;
  readonly description?: string;
  readonly condition?: string;
  readonly body?: unknown;
}

type LockHolder = (token: string) => MessageEntity | undefined;
/** True when the requesting connection's receiver holds the session. */
type SessionHeld = (sessionId: string) => boolean;

const lockLost: ManagementReply = {
  status: 410,
  condition: 'com.microsoft:message-lock-lost',
  description: 'The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.',
};

/**
 * The `$management` operations the SDKs use on a queue: peek, lock renewal, settlement by lock token
 * (for messages received by sequence number), receive deferred messages, schedule and cancel.
 */
export function handleManagementRequest(
  request: AmqpMessage,
  entity: MessageEntity,
  lockHolder: LockHolder,
  sessionHeld: SessionHeld = () => false,
): ManagementReply {
  const operation = request.application_properties?.operation;
  const body = (request.body ?? {}) as Record<string, unknown>;
  const session = sessionOperation(operation, body, entity, sessionHeld);
  if (session) return session;
  switch (operation) {
    case 'com.microsoft:peek-message':
      return peek(entity, body);
    case 'com.microsoft:renew-lock':
      return renewLocks(lockTokensOf(body), lockHolder);
    case 'com.microsoft:update-disposition':
      return updateDisposition(body, lockHolder);
    case 'com.microsoft:receive-by-sequence-number':
      return receiveBySequenceNumber(entity, body);
    default:
      return (
        scheduling(operation, body, entity) ?? {
          status: 501,
          condition: 'amqp:not-implemented',
          description: `The emulator does not implement ${String(operation)}.`,
        }
      );
  }
}

/** What scheduling needs of an entity: a queue schedules in itself, a topic into its subscriptions. */
interface Schedulable {
  readonly settings: { readonly maxMessageSizeBytes?: number };
  schedule(message: AmqpMessage, atMs: number): number | undefined;
  cancelScheduled(sequenceNumber: number): void;
}

/** A topic's `$management`: a sender schedules and cancels there; nothing can be received from a topic. */
export function handleTopicManagementRequest(request: AmqpMessage, topic: Schedulable): ManagementReply {
  const operation = request.application_properties?.operation;
  const body = (request.body ?? {}) as Record<string, unknown>;
  return (
    scheduling(operation, body, topic) ?? {
      status: 400,
      condition: 'amqp:not-allowed',
      description: `${String(operation)} is not allowed on a topic: use one of its subscriptions.`,
    }
  );
}

/** Schedule and cancel, the same on a queue and a topic; undefined for any other operation. */
function scheduling(operation: unknown, body: Record<string, unknown>, target: Schedulable): ManagementReply | undefined {
  if (operation === 'com.microsoft:schedule-message') return schedule(target, body);
  if (operation !== 'com.microsoft:cancel-scheduled-message') return undefined;
  for (const seq of listOf(body['sequence-numbers'])) target.cancelScheduled(sequenceNumberOf(seq));
  return { status: 200, body: {} };
}

/**
 * Session lock renewal and session state, for the receiver that holds the session; anyone else is
 * answered session-lock-lost, as Service Bus does. Undefined for operations that are not about sessions.
 */
function sessionOperation(operation: unknown, body: Record<string, unknown>, entity: MessageEntity, sessionHeld: SessionHeld): ManagementReply | undefined {
  if (operation !== 'com.microsoft:renew-session-lock' && operation !== 'com.microsoft:get-session-state' && operation !== 'com.microsoft:set-session-state')
    return undefined;
  const sessions = entity.sessions;
  if (!sessions) return { status: 400, condition: 'amqp:not-allowed', description: `${entity.name} does not require sessions.` };
  const sessionId = String(body['session-id'] ?? '');
  if (!sessionHeld(sessionId)) return sessionLockLost(sessionId);
  if (operation === 'com.microsoft:renew-session-lock') {
    const until = sessions.renew(sessionId);
    return until === undefined ? sessionLockLost(sessionId) : { status: 200, body: { expiration: new Date(until) } };
  }
  if (operation === 'com.microsoft:get-session-state') {
    const state = sessions.getState(sessionId);
    return { status: 200, body: { 'session-state': state === undefined ? null : types.wrap_binary(state) } };
  }
  const state = body['session-state'];
  sessions.setState(sessionId, state === undefined || state === null ? undefined : Buffer.from(state as Buffer));
  return { status: 200, body: {} };
}

function sessionLockLost(sessionId: string): ManagementReply {
  return {
    status: 410,
    condition: 'com.microsoft:session-lock-lost',
    description: `The session lock has expired on the MessageSession '${sessionId}'. Accept a new MessageSession.`,
  };
}

function peek(entity: MessageEntity, body: Record<string, unknown>): ManagementReply {
  const sessionId = body['session-id'];
  const from = sequenceNumberOf(body['from-sequence-number']);
  const count = Number(body['message-count'] ?? 1);
  // A session receiver peeks its own session's messages only.
  const messages =
    typeof sessionId === 'string'
      ? entity
          .peek(from, Number.MAX_SAFE_INTEGER)
          .filter((m) => sessionIdOf(m) === sessionId)
          .slice(0, count)
      : entity.peek(from, count);
  if (messages.length === 0) return { status: 204, description: 'No messages' };
  return { status: 200, body: { messages: messages.map((m) => ({ message: encodeMessage(toWireMessage(m)) })) } };
}

function renewLocks(tokens: string[], lockHolder: LockHolder): ManagementReply {
  const expirations: Date[] = [];
  for (const token of tokens) {
    const until = lockHolder(token)?.renewLock(token);
    if (until === undefined) return lockLost;
    expirations.push(new Date(until));
  }
  // An AMQP array of timestamps (0x83), not a list: the .NET client refuses anything else.
  return { status: 200, body: { expirations: types.wrap_array(expirations, 0x83, undefined) } };
}

const dispositionByStatus: Record<string, Settlement['kind']> = {
  completed: 'complete',
  abandoned: 'abandon',
  defered: 'defer', // sic: the service's spelling
  suspended: 'dead-letter',
};

function updateDisposition(body: Record<string, unknown>, lockHolder: LockHolder): ManagementReply {
  const kind = dispositionByStatus[String(body['disposition-status'])];
  if (!kind) return { status: 400, condition: 'amqp:invalid-field', description: `Unknown disposition ${String(body['disposition-status'])}` };
  const properties = body['properties-to-modify'] as Record<string, unknown> | undefined;
  const settlement: Settlement =
    kind === 'dead-letter'
      ? { kind, info: { reason: optionalText(body['deadletter-reason']), description: optionalText(body['deadletter-description']), properties } }
      : kind === 'complete'
        ? { kind }
        : { kind, properties };
  for (const token of lockTokensOf(body)) {
    const result = lockHolder(token)?.settle(token, settlement) ?? 'lock-lost';
    if (result === 'lock-lost') return lockLost;
    if (result === 'not-allowed') return { status: 400, ...deadLetterInDeadLetterQueue };
  }
  return { status: 200, body: {} };
}

function receiveBySequenceNumber(entity: MessageEntity, body: Record<string, unknown>): ManagementReply {
  const locked = entity.lockDeferred(listOf(body['sequence-numbers']).map(sequenceNumberOf));
  if (locked.length === 0) return { status: 404, condition: 'com.microsoft:message-not-found', description: 'No deferred message has those sequence numbers.' };
  const messages = locked.map(({ message, lock }) => ({
    message: encodeMessage(toWireMessage(message, lock)),
    'lock-token': types.wrap_uuid(uuidBytes(lock.token)),
  }));
  return { status: 200, body: { messages } };
}

function schedule(entity: Schedulable, body: Record<string, unknown>): ManagementReply {
  const sequenceNumbers: unknown[] = [];
  const entries = listOf(body.messages) as { message: Buffer }[];
  // A scheduled send meets the entity's size limit as a send does; none of the batch is taken.
  const limit = entity.settings.maxMessageSizeBytes ?? standardMaxMessageSizeBytes;
  const tooLarge = entries.find((e) => Buffer.isBuffer(e.message) && e.message.length > limit);
  if (tooLarge) {
    return {
      status: 400,
      condition: 'amqp:link:message-size-exceeded',
      description: `The received message (size: ${tooLarge.message.length} bytes) exceeds the limit (${limit} bytes) currently allowed on the link.`,
    };
  }
  for (const entry of entries) {
    const message = decodeMessage(entry.message);
    const at = message.message_annotations?.['x-opt-scheduled-enqueue-time'];
    const seq = entity.schedule(message, at instanceof Date || typeof at === 'number' ? new Date(at).getTime() : Date.now());
    if (seq !== undefined) sequenceNumbers.push(types.wrap_long(seq));
  }
  return { status: 200, body: { 'sequence-numbers': sequenceNumbers } };
}

function lockTokensOf(body: Record<string, unknown>): string[] {
  return listOf(body['lock-tokens']).map((t) => (Buffer.isBuffer(t) ? uuidText(t) : String(t)));
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
}

function optionalText(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : String(value);
}
