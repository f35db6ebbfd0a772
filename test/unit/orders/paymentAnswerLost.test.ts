import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, TransientStoreError, replace } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, WriteOperation } from '../../../src/idempotency/index.js';
import { OrderConsumer } from '../../../src/orders/index.js';
import { maxExactAmount } from '../../../src/orders/money.js';
import type { OrderDocument } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { newOrderId, orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';

/**
 * A first delivery's attempt commits the payment (marker + order in one batch) and its answer is
 * lost (a timeout). The in-invocation retry is still a "first delivery" (the history is read once,
 * from the envelope), so it does not read its marker first: it reads the order, which already counts
 * the payment, and judges the range against that sum. Near the exact-sum bound the payment that was
 * counted is rejected as AmountOutOfRange: a valid message dead-lettered through an ordinary fault,
 * with a record saying it was not counted. (Also so in 04114d6: the restructure kept it.)
 */
describe('PaymentReceived: the in-invocation retry after a batch whose answer was lost', () => {
  it('is a duplicate, not AmountOutOfRange judged against its own effect', async () => {
    let nowMs = Date.parse('2026-11-30T12:00:00Z');
    const inner = new InMemoryDocumentStore(() => nowMs);
    let loseAnswerOfMarkerBatch = false;
    const store: DocumentStore = {
      read: (pk, id) => inner.read(pk, id),
      find: (query) => inner.find(query),
      async commit(pk: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
        const result = await inner.commit(pk, operations);
        const marker = (operations[0]?.document as { docType?: string } | undefined)?.docType === 'inbox';
        if (loseAnswerOfMarkerBatch && marker && result.kind === 'committed') {
          loseAnswerOfMarkerBatch = false;
          throw new TransientStoreError('request timed out after the batch was applied', 408);
        }
        return result;
      },
    };
    const consumer = new OrderConsumer({
      store,
      now: () => new Date(nowMs),
      sleep: async (ms: number) => {
        nowMs += ms;
      },
      markerTtlSeconds: 3600,
      maxConcurrencyAttempts: 5,
      orderEventsDestination: 'order-events',
      maxMessageBytes: 262_144,
      telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
      retry: { inInvocationMs: 10_000, firstDelayMs: 1_000, maxDelayMs: 60_000, budgetMs: 3_600_000 },
    });
    const log = new RecordingLog();
    const orderId = newOrderId();
    const send = (messageId: string, subject: string, body: unknown, sequenceNumber: number) =>
      consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount: 1, sequenceNumber }), body, log);
    expect((await send('place-1', 'OrderPlaced', orderPlaced(orderId), 1)).outcome.kind).toBe('created');
    // Earlier payments brought the order to one maximal payment below the exact-sum bound.
    const stored = await inner.read<OrderDocument>(orderId, orderId);
    const nearTheBound: OrderDocument = { ...stored!.document, amountPaid: maxExactAmount - 10_000_000 };
    await inner.commit(orderId, [replace(nearTheBound, stored!.etag)]);

    loseAnswerOfMarkerBatch = true;
    const paid = await send('pay-1', 'PaymentReceived', paymentReceived(orderId, { amount: 10_000_000 }), 2);

    expect((await inner.read<OrderDocument>(orderId, orderId))?.document.amountPaid).toBe(maxExactAmount);
    expect(paid.outcome).toMatchObject({ kind: 'duplicate' });
  });
});
