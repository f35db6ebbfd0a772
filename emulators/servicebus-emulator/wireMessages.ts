import rhea from 'rhea';
import { uuidBytes } from './lockTokens.js';
import type { AmqpMessage } from './entityTypes.js';
import type { MessageLock, StoredMessage } from './messageEntity.js';

const { types } = rhea;

/** Message states as the SDKs read them from `x-opt-message-state`. */
const messageStateCode = { active: 0, deferred: 1, scheduled: 2 } as const;

const maxHeaderTtlMs = 0xffff_ffff;

/**
 * A stored message as a receiver sees it: the sender's message plus what the broker owns (sequence
 * number, enqueued time, state, lock, delivery count and the effective time-to-live, from which the
 * SDKs compute `expiresAtUtc`).
 */
export function toWireMessage(m: StoredMessage, lock?: MessageLock): AmqpMessage {
  const annotations: Record<string, unknown> = {
    ...(m.message.message_annotations ?? {}),
    'x-opt-sequence-number': types.wrap_long(m.sequenceNumber),
    'x-opt-enqueued-time': new Date(m.enqueuedAtMs),
  };
  // A message that was scheduled says so for good, as Service Bus reports it once it is due too.
  const state = m.state === 'active' && m.scheduledAtMs !== undefined ? 'scheduled' : m.state;
  if (state !== 'active') annotations['x-opt-message-state'] = types.wrap_int(messageStateCode[state]);
  if (lock) {
    annotations['x-opt-locked-until'] = new Date(lock.lockedUntilMs);
    annotations['x-opt-lock-token'] = types.wrap_uuid(uuidBytes(lock.token));
  }
  // The header's ttl is a uint (ms, at most about 49.7 days); a longer one travels as the
  // properties' absolute expiry time alone, from which the SDKs compute it, as Service Bus sends it.
  const ttl = Number.isFinite(m.expiresAtMs) ? m.expiresAtMs - m.enqueuedAtMs : undefined;
  const header = ttl !== undefined && ttl <= maxHeaderTtlMs ? { ttl } : {};
  const { ttl: _sent, ...rest } = m.message;
  return { ...rest, ...header, delivery_count: m.deliveryCount, message_annotations: annotations };
}

export function encodeMessage(message: AmqpMessage): Buffer {
  return rhea.message.encode(message as never);
}

export function decodeMessage(bytes: Buffer): AmqpMessage {
  return rhea.message.decode(bytes) as unknown as AmqpMessage;
}

/** Sequence numbers arrive as numbers or as 8-byte big-endian buffers (Long.toBytesBE). */
export function sequenceNumberOf(value: unknown): number {
  if (Buffer.isBuffer(value)) return Number(value.readBigInt64BE(0));
  return Number(value);
}

/** A batch send (message format 0x80013700) carries each message encoded in one data section. */
export const batchMessageFormat = 0x80013700;

/** rhea leaves a delivery of another format undecoded: the outer message's bytes. */
export function unpackBatch(bytes: Buffer): AmqpMessage[] {
  const envelope = rhea.message.decode(bytes) as unknown as { body: { multiple?: boolean; content: unknown } };
  const parts = envelope.body.multiple ? (envelope.body.content as Buffer[]) : [envelope.body.content as Buffer];
  return parts.map((part) => decodeMessage(part));
}
