import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, TransientStoreError } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, WriteOperation } from '../../../src/idempotency/index.js';
import { intakeOn, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// The one line each request logs (the custom dimensions Application Insights gets) and its answer.
const recordOf = (log: { lines: { level: string; record: Record<string, unknown> }[] }) => {
  expect(log.lines).toHaveLength(1);
  return log.lines[0] as { level: string; record: Record<string, unknown> };
};

describe("the intake's log line", () => {
  it('for an accepted order: its key, order, status, no reason, and a duration in milliseconds', async () => {
    const { submit, log } = intakeOn(new InMemoryDocumentStore(), new TestClock());
    await submit(orderRequest('k-1', orderPlaced('o-1')));
    const { record } = recordOf(log);
    expect(record).toMatchObject({ event: 'order-request', idempotencyKey: 'k-1', orderId: 'o-1', outcome: 'created', status: 202, replayed: false });
    expect(record).not.toHaveProperty('reason');
    expect(record.durationMs).toBeGreaterThanOrEqual(0);
    expect(record.durationMs).toBeLessThan(60_000);
  });

  it('for a replay: replayed true; for a refusal before any write: refused, not replayed, with the problem type as reason', async () => {
    const store = new InMemoryDocumentStore();
    const first = intakeOn(store, new TestClock());
    await first.submit(orderRequest('k-1', orderPlaced('o-1')));
    const again = intakeOn(store, new TestClock());
    await again.submit(orderRequest('k-1', orderPlaced('o-1')));
    expect(recordOf(again.log).record).toMatchObject({ outcome: 'duplicate', status: 202, replayed: true });
    const refused = intakeOn(store, new TestClock());
    await refused.submit(orderRequest(undefined, orderPlaced('o-1')));
    const { record } = recordOf(refused.log);
    expect(record).toMatchObject({ event: 'order-request', outcome: 'refused', status: 400, replayed: false, reason: 'idempotency-key-missing' });
    expect(record.durationMs).toBeLessThan(60_000);
  });

  it('for a 4xx after the key was read: the problem type as reason', async () => {
    const store = new InMemoryDocumentStore();
    await intakeOn(store, new TestClock()).submit(orderRequest('k-1', orderPlaced('o-1')));
    const reused = intakeOn(store, new TestClock());
    await reused.submit(orderRequest('k-1', orderPlaced('o-1', { customerId: 'other' })));
    expect(recordOf(reused.log).record).toMatchObject({ outcome: 'conflict', status: 422, replayed: false, reason: 'idempotency-key-reused' });
  });

  it('for a store that is down: unavailable, 503, the error as reason, and an answer that says to retry with the same key', async () => {
    const inner = new InMemoryDocumentStore();
    const failing: DocumentStore = {
      read: (pk, id) => inner.read(pk, id),
      find: (q) => inner.find(q),
      commit: (pk: string, ops: readonly WriteOperation[]): Promise<CommitResult> =>
        ops.some((op) => (op.document as { docType?: string }).docType === 'intake')
          ? Promise.reject(new TransientStoreError('503 from the store'))
          : inner.commit(pk, ops),
    };
    const { submit, log } = intakeOn(failing, new TestClock());
    const response = await submit(orderRequest('k-1', orderPlaced('o-1')));
    expect(response).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '5' },
      body: {
        title: 'Try again shortly',
        detail:
          'the order store is unavailable for now, so this request has no answer yet; retry with the same Idempotency-Key and body: the retry gets the answer (the same 202 if the order was accepted), never a second order',
      },
    });
    const { record } = recordOf(log);
    expect(record).toMatchObject({ outcome: 'unavailable', status: 503, replayed: false, reason: '503 from the store' });
    expect(record.durationMs).toBeLessThan(60_000);
  });
});
