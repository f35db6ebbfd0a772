import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { creditPointsOnce } from '../../docs/examples/creditLoyaltyPoints.js';
import { loyaltyConsumer } from '../../docs/examples/loyaltyConsumer.js';
import { rejectedMessagesPartition, rejectionDocumentId, throwUnlessCompletable } from '../../src/consumer/index.js';
import type { RejectionDocument } from '../../src/consumer/index.js';
import { InMemoryDocumentStore, create, replace } from '../../src/idempotency/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { RecordingLog } from '../support/recordingLog.js';

describe('the "use the core in your own consumer" example (docs/architecture.md)', () => {
  it('credits once, absorbs a redelivery, flags a reused key, refuses a keyless message', async () => {
    const store = new InMemoryDocumentStore();
    const message = { messageId: 'earn-1', body: { customerId: 'c-1', points: 50 } };
    expect(await creditPointsOnce(store, message)).toBe('credited');
    expect(await creditPointsOnce(store, message)).toBe('duplicate');
    expect(await creditPointsOnce(store, { ...message, body: { customerId: 'c-1', points: 99 } })).toBe('conflict');
    expect(await creditPointsOnce(store, { body: message.body })).toBe('no-key');
    expect((await store.read<{ id: string; balance: number }>('c-1', 'c-1'))?.document.balance).toBe(50);
  });

  it('counts 20 concurrent copies and 10 different messages exactly once each, a message handed back redelivered', async () => {
    const store = new InMemoryDocumentStore();
    // A 'retry' goes back to the broker, which delivers it again: as many times as it takes here.
    const deliver = async (message: Parameters<typeof creditPointsOnce>[1]): Promise<string> => {
      for (;;) {
        const outcome = await creditPointsOnce(store, message);
        if (outcome !== 'retry') return outcome;
      }
    };
    const copies = Array.from({ length: 20 }, () => deliver({ messageId: 'same', body: { customerId: 'c-2', points: 5 } }));
    const others = Array.from({ length: 10 }, (_, i) => deliver({ messageId: `m-${i}`, body: { customerId: 'c-2', points: 1 } }));
    const outcomes = await Promise.all([...copies, ...others]);
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(11);
    expect((await store.read<{ id: string; balance: number }>('c-2', 'c-2'))?.document.balance).toBe(15);
  });

  it('hands a message back after 10 lost races in a row, having credited nothing, and keeps its marker for 30 days', async () => {
    const inner = new InMemoryDocumentStore();
    let commits = 0;
    const racing: typeof inner = Object.assign(Object.create(inner) as typeof inner, {
      commit: async (pk: string, ops: Parameters<typeof inner.commit>[1]) => {
        commits += 1;
        const account = await inner.read<{ id: string; balance: number }>('c-3', 'c-3');
        if (account) await inner.commit('c-3', [replace({ ...account.document }, account.etag)]); // another writer, every time
        return inner.commit(pk, ops);
      },
    });
    await inner.commit('c-3', [create({ id: 'c-3', balance: 0 } as { id: string })]);
    expect(await creditPointsOnce(racing, { messageId: 'r-1', body: { customerId: 'c-3', points: 7 } })).toBe('retry');
    expect(commits).toBe(10);
    expect((await inner.read<{ id: string; balance: number }>('c-3', 'c-3'))?.document.balance).toBe(0);
    expect(await creditPointsOnce(inner, { messageId: 'r-1', body: { customerId: 'c-3', points: 7 } })).toBe('credited');
    expect((await inner.read<{ id: string; ttl?: number }>('c-3', 'inbox|loyalty|r-1'))?.document.ttl).toBe(30 * 24 * 3600);
  });

  it('is quoted in docs/architecture.md as it is in the file, so the two cannot drift', () => {
    const example = readFileSync('docs/examples/creditLoyaltyPoints.ts', 'utf8');
    const body = example.slice(example.indexOf('export async function'));
    expect(readFileSync('docs/architecture.md', 'utf8')).toContain(body.trim());
    expect(readFileSync('README.md', 'utf8')).toContain(example.slice(example.indexOf('const markerTtlSeconds')).trim());
  });
});

describe('the third consumer on the pipeline (docs/examples/loyaltyConsumer.ts, docs/bring-your-own.md)', () => {
  const consumerOn = (store: InMemoryDocumentStore) =>
    loyaltyConsumer({
      store,
      now: () => new Date('2026-12-01T10:00:00Z'),
      markerTtlSeconds: 3600,
      maxConcurrencyAttempts: 5,
      maxMessageBytes: 4096,
      telemetry: { report: () => undefined },
    });
  const delivery = (messageId: string, subject: string, deliveryCount = 1) =>
    envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: 1 });
  const balanceOf = async (store: InMemoryDocumentStore, customerId: string) =>
    (await store.read<{ id: string; balance: number }>(customerId, customerId))?.document.balance;

  it('earns and redeems once each, absorbs a redelivery, and the host completes all of them', async () => {
    const store = new InMemoryDocumentStore();
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    const earned = await consumer.consume(delivery('e-1', 'PointsEarned'), { customerId: 'c-1', points: 50 }, log);
    const again = await consumer.consume(delivery('e-1', 'PointsEarned', 2), { customerId: 'c-1', points: 50 }, log);
    const redeemed = await consumer.consume(delivery('r-1', 'PointsRedeemed'), { customerId: 'c-1', points: 20 }, log);
    expect([earned, again, redeemed].map((r) => r.outcome.kind)).toEqual(['created', 'duplicate', 'created']);
    expect(earned).toMatchObject({ dedupKey: 'loyalty|e-1', type: 'PointsEarned' });
    for (const result of [earned, again, redeemed]) expect(() => throwUnlessCompletable(result.outcome)).not.toThrow();
    expect(await balanceOf(store, 'c-1')).toBe(30);
  });

  it('rejects a reused key, an overdraft, an unknown type and a schema violation, each with its record, changing nothing', async () => {
    const store = new InMemoryDocumentStore();
    const consumer = consumerOn(store);
    const log = new RecordingLog();
    await consumer.consume(delivery('e-2', 'PointsEarned'), { customerId: 'c-2', points: 10 }, log);
    const rejected = [
      ['e-2', 'PointsEarned', { customerId: 'c-2', points: 99 }, 'PayloadConflict'],
      ['r-2', 'PointsRedeemed', { customerId: 'c-2', points: 11 }, 'NotEnoughPoints'],
      ['x-2', 'PointsGifted', { customerId: 'c-2', points: 1 }, 'UnknownMessageType'],
      ['s-2', 'PointsEarned', { customerId: 'c-2', points: -1 }, 'SchemaViolation'],
    ] as const;
    for (const [messageId, subject, body, code] of rejected) {
      const result = await consumer.consume(delivery(messageId, subject, messageId === 'e-2' ? 2 : 1), body, log);
      expect(result.outcome, messageId).toMatchObject({ error: { code } });
      expect(() => throwUnlessCompletable(result.outcome)).toThrow();
      const record = await store.read<RejectionDocument>(rejectedMessagesPartition(messageId), rejectionDocumentId(messageId, 'loyalty'));
      expect(record?.document.reason, messageId).toBe(code);
    }
    expect(await balanceOf(store, 'c-2')).toBe(10);
  });
});
