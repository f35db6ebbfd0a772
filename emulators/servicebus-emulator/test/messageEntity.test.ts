import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MessageEntity } from '../messageEntity.js';
import type { QueueSettings } from '../index.js';

const settings: QueueSettings = {
  lockDurationMs: 60_000,
  maxDeliveryCount: 2,
  defaultMessageTimeToLiveMs: 3_600_000,
  duplicateDetectionWindowMs: 600_000,
  deadLetteringOnMessageExpiration: true,
};

function queue(overrides: Partial<QueueSettings> = {}): MessageEntity {
  const q = new MessageEntity('orders', { ...settings, ...overrides }, () => {});
  q.deadLetterQueue = new MessageEntity('orders/$deadletterqueue', { ...settings, duplicateDetectionWindowMs: 0 }, () => {}, false);
  return q;
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-11-30T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('MessageEntity', () => {
  describe('duplicate detection', () => {
    it('drops a MessageId seen within the window, counted from the first send, and accepts it after', () => {
      const q = queue();
      expect(q.accept({ message_id: 'm' }).kind).toBe('enqueued');
      vi.advanceTimersByTime(599_999);
      expect(q.accept({ message_id: 'm' }).kind).toBe('duplicate');
      vi.advanceTimersByTime(1);
      expect(q.accept({ message_id: 'm' }).kind).toBe('enqueued');
    });

    it('is off when the window is 0', () => {
      const q = queue({ duplicateDetectionWindowMs: 0 });
      q.accept({ message_id: 'm' });
      expect(q.accept({ message_id: 'm' }).kind).toBe('enqueued');
    });
  });

  describe('locks', () => {
    it('counts an expired lock as a failed delivery and hands the message out again', () => {
      const q = queue();
      q.accept({ message_id: 'm' });
      const m = q.takeNextAvailable()!;
      const { token } = q.lock(m);
      vi.advanceTimersByTime(60_000);
      expect(q.settle(token, { kind: 'complete' })).toBe('lock-lost');
      expect(q.takeNextAvailable()).toMatchObject({ sequenceNumber: m.sequenceNumber, deliveryCount: 1 });
    });

    it('moves a message to the dead-letter queue at maxDeliveryCount, keeping its sequence number', () => {
      const q = queue();
      q.accept({ message_id: 'm' });
      for (let i = 0; i < 2; i += 1) q.settle(q.lock(q.takeNextAvailable()!).token, { kind: 'abandon' });
      expect(q.takeNextAvailable()).toBeUndefined();
      const dead = q.deadLetterQueue!.takeNextAvailable();
      expect(dead).toMatchObject({ sequenceNumber: 1, deliveryCount: 2 });
      expect(dead?.message.application_properties).toMatchObject({ DeadLetterReason: 'MaxDeliveryCountExceeded' });
    });

    it('hands out the lowest sequence number first, also after an abandon', () => {
      const q = queue();
      for (const id of ['a', 'b', 'c']) q.accept({ message_id: id });
      const a = q.takeNextAvailable()!;
      const b = q.takeNextAvailable()!;
      q.lock(b);
      q.settle(q.lock(a).token, { kind: 'abandon' });
      expect(q.takeNextAvailable()?.message.message_id).toBe('a');
      expect(q.takeNextAvailable()?.message.message_id).toBe('c');
    });
  });

  describe('time-to-live', () => {
    it('uses the shorter of the message ttl and the queue default, and dead-letters on expiry', () => {
      const q = queue();
      q.accept({ message_id: 'short', ttl: 1_000 });
      q.accept({ message_id: 'long', ttl: 10 * 3_600_000 });
      vi.advanceTimersByTime(1_000);
      expect(q.peek(1, 10).map((m) => m.message.message_id)).toEqual(['long']);
      expect(q.deadLetterQueue!.peek(1, 10)[0]?.message.application_properties).toMatchObject({ DeadLetterReason: 'TTLExpiredException' });
      vi.advanceTimersByTime(3_600_000);
      expect(q.peek(1, 10)).toEqual([]);
      // Both expired into the dead-letter queue, which keeps them past their expiry time.
      vi.advanceTimersByTime(30 * 24 * 3_600_000);
      expect(q.deadLetterQueue!.peek(1, 10).map((m) => m.message.message_id)).toEqual(['short', 'long']);
    });

    it('lets a locked message finish its lock before it expires', () => {
      const q = queue();
      q.accept({ message_id: 'm', ttl: 1_000 });
      const { token } = q.lock(q.takeNextAvailable()!);
      vi.advanceTimersByTime(5_000);
      expect(q.settle(token, { kind: 'complete' })).toBe('settled');
      expect(q.deadLetterQueue!.peek(1, 10)).toEqual([]);
    });
  });

  it('holds a scheduled message until its time', () => {
    const q = queue();
    q.schedule({ message_id: 'later' }, Date.now() + 10_000);
    expect(q.takeNextAvailable()).toBeUndefined();
    expect(q.peek(1, 10)[0]?.state).toBe('scheduled');
    vi.advanceTimersByTime(10_000);
    expect(q.takeNextAvailable()?.message.message_id).toBe('later');
  });
});
