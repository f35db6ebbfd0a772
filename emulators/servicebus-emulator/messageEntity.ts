import { randomUUID } from 'node:crypto';
import { DueTimer } from './dueTimer.js';
import { MinHeap } from '../emulator-kit/minHeap.js';
import { newLockToken } from './lockTokens.js';
import type { AmqpMessage, QueueSettings } from './entityTypes.js';
import { Sessions } from './sessions.js';

export type MessageState = 'active' | 'deferred' | 'scheduled';

/**
 * The sender's time-to-live: the header's ttl, or, for one too long for the header's uint (the SDKs
 * leave it out past about 49.7 days), the absolute expiry time less the creation time. Infinity if neither.
 */
export function messageTimeToLiveMs(message: AmqpMessage): number {
  if (typeof message.ttl === 'number') return message.ttl;
  const expiry = message.absolute_expiry_time;
  const created = message.creation_time;
  if (expiry instanceof Date && created instanceof Date && expiry.getTime() > created.getTime()) return expiry.getTime() - created.getTime();
  return Infinity;
}

export interface StoredMessage {
  readonly sequenceNumber: number;
  message: AmqpMessage;
  readonly enqueuedAtMs: number;
  readonly expiresAtMs: number;
  /** Failed deliveries so far: the AMQP header's delivery-count (0 on the first delivery). */
  deliveryCount: number;
  state: MessageState;
  scheduledAtMs?: number;
  lock?: MessageLock;
}

export interface MessageLock {
  readonly token: string;
  lockedUntilMs: number;
  timer: NodeJS.Timeout;
}

export interface DeadLetterInfo {
  readonly reason?: string;
  readonly description?: string;
  readonly properties?: Record<string, unknown>;
}

export type Settlement =
  | { readonly kind: 'complete' }
  | { readonly kind: 'abandon'; readonly properties?: Record<string, unknown> }
  | { readonly kind: 'defer'; readonly properties?: Record<string, unknown> }
  | { readonly kind: 'dead-letter'; readonly info: DeadLetterInfo };

export type SettleResult = 'settled' | 'lock-lost' | 'not-allowed';

export type AcceptResult = { readonly kind: 'enqueued'; readonly sequenceNumber: number } | { readonly kind: 'duplicate' };

const scheduledEnqueueTimeAnnotation = 'x-opt-scheduled-enqueue-time';

/**
 * One queue or dead-letter sub-queue, with the semantics Azure documents: peek-lock with a lock
 * that expires (then the delivery counts as failed), delivery limit -> dead-letter queue, time-to-live
 * (optionally dead-lettered on expiry), deferral, scheduled messages, and duplicate detection that
 * accepts the copy of a known MessageId and silently drops it. Messages are handed out lowest
 * sequence number first; every lookup is O(log n).
 */
export class MessageEntity {
  readonly messages = new Map<number, StoredMessage>();
  deadLetterQueue?: MessageEntity;
  /** Sends accepted and silently dropped by duplicate detection, for the local stack's summary. */
  duplicatesDropped = 0;
  private readonly available = new MinHeap<number>((a, b) => a < b);
  private readonly expiries = new DueTimer((seq, nowMs) => this.expireIfDue(seq, nowMs));
  private readonly scheduled = new DueTimer((seq) => this.enqueueScheduled(seq));
  private readonly locks = new Map<string, StoredMessage>();
  private readonly seenMessageIds = new Map<string, number>();
  private lastSequenceNumber = 0;
  /** Present on a session-enabled entity: its messages wait per session, not in `available`. */
  readonly sessions?: Sessions;
  /** Told when a session lock runs out, so that the broker detaches the receiver that held it. */
  onSessionLockLost?: (sessionId: string, owner: string) => void;

  constructor(
    readonly name: string,
    readonly settings: QueueSettings,
    private readonly onAvailable: (entity: MessageEntity) => void,
    /** False for a dead-letter queue: its messages keep their expiry time but never expire there. */
    private readonly expiresMessages = true,
  ) {
    if (settings.requiresSession) {
      this.sessions = new Sessions(settings.lockDurationMs, (sessionId, owner) => {
        this.releaseSessionMessages(sessionId);
        this.onSessionLockLost?.(sessionId, owner);
      });
    }
  }

  /** Releases a session its receiver let go of (link closed): its locked messages count as failed deliveries, as an abandon does. */
  releaseSession(sessionId: string, owner: string): void {
    if (this.sessions?.holder(sessionId) !== owner) return;
    this.sessions.release(sessionId, owner);
    this.releaseSessionMessages(sessionId);
  }

  /** A message from a sender. Returns `duplicate` for a MessageId seen inside the detection window. */
  accept(sent: AmqpMessage): AcceptResult {
    // Service Bus gives a message sent without a MessageId one of its own (a GUID), so that
    // duplicate detection and settlement have something to go by.
    const message =
      sent.message_id === undefined || sent.message_id === null || sent.message_id === '' ? { ...sent, message_id: randomUUID().replace(/-/g, '') } : sent;
    const nowMs = Date.now();
    if (this.isDuplicate(message, nowMs)) return { kind: 'duplicate' };
    const ttlMs = Math.min(messageTimeToLiveMs(message), this.settings.defaultMessageTimeToLiveMs);
    const scheduledAt = message.message_annotations?.[scheduledEnqueueTimeAnnotation];
    const scheduledAtMs = scheduledAt instanceof Date || typeof scheduledAt === 'number' ? new Date(scheduledAt).getTime() : undefined;
    // A scheduled message is enqueued at its scheduled time, as Service Bus reports it; its
    // time-to-live runs from then.
    const enqueuedAtMs = scheduledAtMs !== undefined && scheduledAtMs > nowMs ? scheduledAtMs : nowMs;
    const stored: StoredMessage = {
      sequenceNumber: ++this.lastSequenceNumber,
      message,
      enqueuedAtMs,
      expiresAtMs: enqueuedAtMs + ttlMs,
      deliveryCount: 0,
      state: scheduledAtMs !== undefined && scheduledAtMs > nowMs ? 'scheduled' : 'active',
      scheduledAtMs,
    };
    this.insert(stored);
    return { kind: 'enqueued', sequenceNumber: stored.sequenceNumber };
  }

  /**
   * The next message to hand to a receiver, or undefined. Expired ones met on the way are expired.
   * On a session-enabled entity only a session's receiver gets messages, and only that session's.
   */
  takeNextAvailable(sessionId?: string): StoredMessage | undefined {
    this.expireDue();
    if (this.sessions) {
      if (sessionId === undefined) return undefined;
      for (let seq = this.sessions.pop(sessionId); seq !== undefined; seq = this.sessions.pop(sessionId)) {
        const m = this.messages.get(seq);
        if (m && m.state === 'active' && !m.lock) return m;
      }
      return undefined;
    }
    for (let seq = this.available.pop(); seq !== undefined; seq = this.available.pop()) {
      const m = this.messages.get(seq);
      if (m && m.state === 'active' && !m.lock) return m;
    }
    return undefined;
  }

  hasAvailable(): boolean {
    return this.available.size > 0;
  }

  lock(m: StoredMessage): MessageLock {
    const token = newLockToken();
    const lockedUntilMs = Date.now() + this.settings.lockDurationMs;
    const timer = setTimeout(() => this.onLockExpired(m, token), this.settings.lockDurationMs);
    timer.unref();
    m.lock = { token, lockedUntilMs, timer };
    this.locks.set(token, m);
    return m.lock;
  }

  /** Receive-and-delete: the message leaves the entity as it is sent. */
  remove(m: StoredMessage): void {
    this.unlock(m);
    this.messages.delete(m.sequenceNumber);
  }

  isLocked(token: string): boolean {
    return this.locks.has(token);
  }

  /**
   * Applies a settlement by lock token: `lock-lost` when the lock is unknown (expired or already
   * settled); `not-allowed` for dead-lettering in a dead-letter queue, which Service Bus refuses
   * ("you can't dead-letter a message from a DLQ"): the message is handed back as an abandon there
   * would (uncounted), so the refusal loses nothing and a receiver may take it again.
   */
  settle(token: string, settlement: Settlement): SettleResult {
    const m = this.locks.get(token);
    if (!m) return 'lock-lost';
    this.unlock(m);
    if (settlement.kind === 'dead-letter' && !this.expiresMessages) {
      this.makeAvailable(m);
      return 'not-allowed';
    }
    switch (settlement.kind) {
      case 'complete':
        this.messages.delete(m.sequenceNumber);
        return 'settled';
      case 'abandon':
        this.mergeProperties(m, settlement.properties);
        // In a dead-letter queue the count is the story of the original deliveries: it stays.
        if (this.expiresMessages) this.countFailedDelivery(m);
        else this.makeAvailable(m);
        return 'settled';
      case 'defer':
        this.mergeProperties(m, settlement.properties);
        // The delivery that deferred it counts: received again by sequence number, it says 1.
        m.deliveryCount += 1;
        m.state = 'deferred';
        return 'settled';
      case 'dead-letter':
        this.deadLetter(m, settlement.info);
        return 'settled';
    }
  }

  renewLock(token: string): number | undefined {
    const m = this.locks.get(token);
    if (!m?.lock) return undefined;
    clearTimeout(m.lock.timer);
    m.lock.lockedUntilMs = Date.now() + this.settings.lockDurationMs;
    m.lock.timer = setTimeout(() => this.onLockExpired(m, token), this.settings.lockDurationMs);
    m.lock.timer.unref();
    return m.lock.lockedUntilMs;
  }

  /** Messages from a sequence number on, in order, without locking them (active, deferred, scheduled). */
  peek(fromSequenceNumber: number, count: number): StoredMessage[] {
    this.expireDue();
    return [...this.messages.values()]
      .filter((m) => m.sequenceNumber >= fromSequenceNumber)
      .sort((a, b) => a.sequenceNumber - b.sequenceNumber)
      .slice(0, count);
  }

  /** Locks deferred messages by sequence number, for receiveDeferredMessages. */
  lockDeferred(sequenceNumbers: readonly number[]): { message: StoredMessage; lock: MessageLock }[] {
    return sequenceNumbers
      .map((seq) => this.messages.get(seq))
      .filter((m): m is StoredMessage => m !== undefined && m.state === 'deferred' && !m.lock)
      .map((m) => ({ message: m, lock: this.lock(m) }));
  }

  schedule(message: AmqpMessage, atMs: number): number | undefined {
    const annotations = { ...(message.message_annotations ?? {}), [scheduledEnqueueTimeAnnotation]: new Date(atMs) };
    const result = this.accept({ ...message, message_annotations: annotations });
    return result.kind === 'enqueued' ? result.sequenceNumber : undefined;
  }

  cancelScheduled(sequenceNumber: number): void {
    const m = this.messages.get(sequenceNumber);
    if (m?.state === 'scheduled') this.messages.delete(sequenceNumber);
  }

  close(): void {
    this.expiries.close();
    this.scheduled.close();
    for (const m of this.locks.values()) if (m.lock) clearTimeout(m.lock.timer);
    this.locks.clear();
    this.sessions?.close();
  }

  /** Puts a message in, keeping the sequence number it already has (a dead-lettered message keeps its). */
  insert(m: StoredMessage): void {
    this.messages.set(m.sequenceNumber, m);
    this.lastSequenceNumber = Math.max(this.lastSequenceNumber, m.sequenceNumber);
    if (this.expiresMessages && Number.isFinite(m.expiresAtMs)) this.expiries.add(m.expiresAtMs, m.sequenceNumber);
    if (m.state === 'scheduled' && m.scheduledAtMs !== undefined) this.scheduled.add(m.scheduledAtMs, m.sequenceNumber);
    if (m.state === 'active') this.makeAvailable(m);
  }

  private isDuplicate(message: AmqpMessage, nowMs: number): boolean {
    const windowMs = this.settings.duplicateDetectionWindowMs;
    if (windowMs <= 0 || message.message_id === undefined) return false;
    const id = String(message.message_id);
    this.forgetMessageIdsBefore(nowMs - windowMs);
    if (this.seenMessageIds.has(id)) {
      this.duplicatesDropped += 1;
      return true;
    }
    this.seenMessageIds.set(id, nowMs);
    return false;
  }

  /** The window is fixed from the first send; ids are kept in insertion (= time) order. */
  private forgetMessageIdsBefore(cutoffMs: number): void {
    for (const [id, seenAtMs] of this.seenMessageIds) {
      if (seenAtMs > cutoffMs) return;
      this.seenMessageIds.delete(id);
    }
  }

  private makeAvailable(m: StoredMessage): void {
    if (this.sessions) this.sessions.push(sessionIdOf(m) ?? '', m.sequenceNumber);
    else this.available.push(m.sequenceNumber);
    this.onAvailable(this);
  }

  private releaseSessionMessages(sessionId: string): void {
    for (const m of [...this.locks.values()]) {
      if (sessionIdOf(m) !== sessionId) continue;
      this.unlock(m);
      this.countFailedDelivery(m);
    }
  }

  private onLockExpired(m: StoredMessage, token: string): void {
    if (m.lock?.token !== token) return;
    // In a session the message lock is the session's: while the session is held, it holds.
    const sessionId = sessionIdOf(m);
    if (this.sessions && sessionId !== undefined && this.sessions.holder(sessionId) !== undefined) {
      m.lock.timer = setTimeout(() => this.onLockExpired(m, token), this.settings.lockDurationMs);
      m.lock.timer.unref();
      return;
    }
    this.unlock(m);
    this.countFailedDelivery(m);
  }

  private countFailedDelivery(m: StoredMessage): void {
    m.deliveryCount += 1;
    if (m.deliveryCount >= this.settings.maxDeliveryCount && this.deadLetterQueue) {
      const description = `Message could not be consumed after ${this.settings.maxDeliveryCount} delivery attempts.`;
      this.deadLetter(m, { reason: 'MaxDeliveryCountExceeded', description });
      return;
    }
    if (m.expiresAtMs <= Date.now()) {
      this.expire(m);
      return;
    }
    this.makeAvailable(m);
  }

  private unlock(m: StoredMessage): void {
    if (!m.lock) return;
    clearTimeout(m.lock.timer);
    this.locks.delete(m.lock.token);
    m.lock = undefined;
  }

  private mergeProperties(m: StoredMessage, properties?: Record<string, unknown>): void {
    if (properties && Object.keys(properties).length > 0) {
      m.message = { ...m.message, application_properties: { ...(m.message.application_properties ?? {}), ...properties } };
    }
  }

  private deadLetter(m: StoredMessage, info: DeadLetterInfo): void {
    this.messages.delete(m.sequenceNumber);
    const dlq = this.deadLetterQueue;
    if (!dlq) return;
    const applicationProperties: Record<string, unknown> = { ...(m.message.application_properties ?? {}), ...(info.properties ?? {}) };
    if (info.reason !== undefined) applicationProperties.DeadLetterReason = info.reason;
    if (info.description !== undefined) applicationProperties.DeadLetterErrorDescription = info.description;
    dlq.insert({
      sequenceNumber: m.sequenceNumber,
      message: { ...m.message, application_properties: applicationProperties },
      enqueuedAtMs: m.enqueuedAtMs,
      expiresAtMs: m.expiresAtMs,
      deliveryCount: m.deliveryCount,
      state: 'active',
    });
  }

  private expire(m: StoredMessage): void {
    if (this.settings.deadLetteringOnMessageExpiration && this.deadLetterQueue) {
      this.deadLetter(m, { reason: 'TTLExpiredException', description: 'The message expired and was dead lettered.' });
    } else {
      this.messages.delete(m.sequenceNumber);
    }
  }

  private expireDue(): void {
    this.expiries.runDue();
  }

  private expireIfDue(sequenceNumber: number, nowMs: number): void {
    const m = this.messages.get(sequenceNumber);
    // A locked message expires when its lock ends (see countFailedDelivery), as in Azure.
    if (m && !m.lock && m.expiresAtMs <= nowMs) this.expire(m);
  }

  private enqueueScheduled(sequenceNumber: number): void {
    const m = this.messages.get(sequenceNumber);
    if (m?.state !== 'scheduled') return;
    m.state = 'active';
    this.makeAvailable(m);
  }
}

/** A message's SessionId: the AMQP group-id. */
export function sessionIdOf(m: StoredMessage): string | undefined {
  const id = m.message.group_id;
  return typeof id === 'string' ? id : undefined;
}
