import { MinHeap } from '../emulator-kit/minHeap.js';

/** One session of a session-enabled queue or subscription: its messages in order, its lock, its state. */
interface Session {
  readonly available: MinHeap<number>;
  lock?: SessionLock;
  state?: Buffer;
}

export interface SessionLock {
  /** The receiver link that holds it. */
  readonly owner: string;
  lockedUntilMs: number;
  timer: NodeJS.Timeout;
}

/**
 * The sessions of one entity, as Service Bus keeps them: messages of a session are handed out in
 * sequence order and only to the receiver holding the session's lock; a lock lasts the entity's
 * lock duration unless renewed, and a session is accepted by name or as the next one with a
 * message that nobody holds. State survives the lock (and the session's messages).
 */
export class Sessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly lockDurationMs: number,
    /** Called when a lock runs out unrenewed: the holder loses the session and its messages' locks. */
    private readonly onLockLost: (sessionId: string, owner: string) => void,
  ) {}

  push(sessionId: string, sequenceNumber: number): void {
    this.session(sessionId).available.push(sequenceNumber);
  }

  pop(sessionId: string): number | undefined {
    return this.sessions.get(sessionId)?.available.pop();
  }

  peekFirst(sessionId: string): number | undefined {
    return this.sessions.get(sessionId)?.available.peek();
  }

  /** Locks the named session, or the next unlocked one with a message; undefined when none can be. */
  accept(sessionId: string | undefined, owner: string, nowMs = Date.now()): { sessionId: string; lockedUntilMs: number } | undefined {
    const chosen = sessionId ?? this.nextUnlocked(nowMs);
    if (chosen === undefined) return undefined;
    const session = this.session(chosen);
    if (session.lock && session.lock.owner !== owner && session.lock.lockedUntilMs > nowMs) return undefined;
    if (session.lock) clearTimeout(session.lock.timer);
    session.lock = { owner, lockedUntilMs: nowMs + this.lockDurationMs, timer: this.expiry(chosen, owner) };
    return { sessionId: chosen, lockedUntilMs: session.lock.lockedUntilMs };
  }

  renew(sessionId: string, nowMs = Date.now()): number | undefined {
    const lock = this.sessions.get(sessionId)?.lock;
    if (!lock || lock.lockedUntilMs <= nowMs) return undefined;
    clearTimeout(lock.timer);
    lock.lockedUntilMs = nowMs + this.lockDurationMs;
    lock.timer = this.expiry(sessionId, lock.owner);
    return lock.lockedUntilMs;
  }

  holder(sessionId: string, nowMs = Date.now()): string | undefined {
    const lock = this.sessions.get(sessionId)?.lock;
    return lock && lock.lockedUntilMs > nowMs ? lock.owner : undefined;
  }

  release(sessionId: string, owner: string): void {
    const session = this.sessions.get(sessionId);
    if (session?.lock?.owner !== owner) return;
    clearTimeout(session.lock.timer);
    session.lock = undefined;
  }

  getState(sessionId: string): Buffer | undefined {
    return this.sessions.get(sessionId)?.state;
  }

  setState(sessionId: string, state: Buffer | undefined): void {
    this.session(sessionId).state = state;
  }

  close(): void {
    for (const session of this.sessions.values()) if (session.lock) clearTimeout(session.lock.timer);
  }

  private nextUnlocked(nowMs: number): string | undefined {
    let best: { id: string; first: number } | undefined;
    for (const [id, session] of this.sessions) {
      const first = session.available.peek();
      if (first === undefined || (session.lock && session.lock.lockedUntilMs > nowMs)) continue;
      if (!best || first < best.first) best = { id, first };
    }
    return best?.id;
  }

  private session(sessionId: string): Session {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { available: new MinHeap<number>((a, b) => a < b) };
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  private expiry(sessionId: string, owner: string): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const session = this.sessions.get(sessionId);
      if (session?.lock?.owner !== owner) return;
      session.lock = undefined;
      this.onLockLost(sessionId, owner);
    }, this.lockDurationMs);
    timer.unref();
    return timer;
  }
}
