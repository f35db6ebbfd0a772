import { describe, expect, it } from 'vitest';
import { loyaltyConsumer } from '../../docs/examples/loyaltyConsumer.js';
import { InMemoryDocumentStore, TransientStoreError } from '../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, WriteOperation } from '../../src/idempotency/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { RecordingLog } from '../support/recordingLog.js';

/**
 * The docs' third consumer decides its domain rule (NotEnoughPoints) from the balance before the
 * marker is looked at. A redemption whose effect is already written (its first delivery committed,
 * then lost its lock; or one attempt committed and its answer was lost) is then judged against the
 * balance it already lowered: an ordinary fault sends a valid message to the dead-letter queue,
 * with a record saying the points were not redeemed when they were.
 */
describe('the docs example (loyaltyConsumer.ts): a redemption whose effect is already written', () => {
  const now = () => new Date('2026-12-01T10:00:00Z');
  const options = (store: DocumentStore) => ({
    store,
    now,
    markerTtlSeconds: 3600,
    maxConcurrencyAttempts: 5,
    maxMessageBytes: 4096,
    telemetry: { report: () => undefined },
  });
  const delivery = (messageId: string, subject: string, sequenceNumber: number, deliveryCount = 1) =>
    envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber });

  it('is a duplicate on its redelivery, not NotEnoughPoints (the first delivery committed, then lost its lock)', async () => {
    const store = new InMemoryDocumentStore();
    const consumer = loyaltyConsumer(options(store));
    const log = new RecordingLog();
    await consumer.consume(delivery('e-9', 'PointsEarned', 1), { customerId: 'c-9', points: 50 }, log);
    const first = await consumer.consume(delivery('r-9', 'PointsRedeemed', 2), { customerId: 'c-9', points: 50 }, log);
    expect(first.outcome.kind).toBe('created');
    // The host could not complete it (lock lost): Service Bus delivers the same broker message again.
    const again = await consumer.consume(delivery('r-9', 'PointsRedeemed', 2, 2), { customerId: 'c-9', points: 50 }, log);
    expect(again.outcome.kind).toBe('duplicate');
  });

  it('is not rejected on the in-invocation retry after a commit whose answer was lost', async () => {
    const inner = new InMemoryDocumentStore();
    let loseNextAnswer = false;
    // The batch is applied, then its answer is lost (a timeout): the store call throws.
    const store: DocumentStore = {
      read: (pk, id) => inner.read(pk, id),
      find: (query) => inner.find(query),
      async commit(pk: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
        const result = await inner.commit(pk, operations);
        if (loseNextAnswer) {
          loseNextAnswer = false;
          throw new TransientStoreError('request timed out after the batch was applied', 408);
        }
        return result;
      },
    };
    let clock = now().getTime();
    const consumer = loyaltyConsumer({
      ...options(store),
      now: () => new Date(clock),
      sleep: async (ms: number) => {
        clock += ms;
      },
      retry: { inInvocationMs: 10_000, firstDelayMs: 1_000, maxDelayMs: 60_000, budgetMs: 3_600_000 },
    });
    const log = new RecordingLog();
    await consumer.consume(delivery('e-8', 'PointsEarned', 1), { customerId: 'c-8', points: 50 }, log);
    loseNextAnswer = true;
    const redeemed = await consumer.consume(delivery('r-8', 'PointsRedeemed', 2), { customerId: 'c-8', points: 50 }, log);
    expect((await inner.read<{ id: string; balance: number }>('c-8', 'c-8'))?.document.balance).toBe(0);
    expect(redeemed.outcome.kind).not.toBe('invalid');
  });
});
