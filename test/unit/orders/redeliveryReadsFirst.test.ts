import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { create } from '../../../src/idempotency/index.js';
import type { StoredDocument, WriteOperation } from '../../../src/idempotency/index.js';
import { OrderConsumer, inboxMarkerId, orderDocumentId } from '../../../src/orders/index.js';
import type { ConflictDocument } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { touches } from '../../support/interleavingStore.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';
import { signedRetryProperties, testRetryStateKey } from '../../support/signedRetryState.js';

// A delivery that may follow an attempt that wrote (the broker's deliveryCount > 1, or a delayed-retry
// copy whose signed state verifies) reads first and writes only when nothing is there. The trips are
// counted at the store: reads, commits and queries.
type Flow = ReturnType<typeof orderFlow>;
const crash = () => Promise.reject(new Error('the process died here'));
const createsOrder = (_pk: string, operations: readonly WriteOperation[]) =>
  operations[0]?.kind === 'create' && (operations[0].document as { docType?: string }).docType === 'order';
const payment = (orderId: string, overrides: Record<string, unknown> = {}) => paymentReceived(orderId, { paymentId: 'P-1', amount: 5, ...overrides });
const retryCopy = (copyId: string, dedupKey: string) =>
  signedRetryProperties(copyId, { dedupKey, attempt: 1, firstFailureAt: '2026-11-30T11:59:00.000Z', root: dedupKey });

/** The trips one delivery makes, and its outcome. */
async function counted(t: Flow, deliver: () => ReturnType<Flow['send']>) {
  const before = { reads: t.store.reads, commits: t.store.commits, queries: t.store.queries };
  const result = await deliver();
  return {
    outcome: result.outcome,
    trips: { reads: t.store.reads - before.reads, commits: t.store.commits - before.commits, queries: t.store.queries - before.queries },
  };
}

/** Another instance of the app on the same store, whose calls the flow under test does not count. */
function otherInstance(t: Flow) {
  const consumer = new OrderConsumer({
    ...t.ctx,
    store: t.memory,
    maxMessageBytes: 262_144,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
  });
  return (messageId: string, subject: string, body: unknown, deliveryCount = 1) =>
    consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: 900 }), body, new RecordingLog());
}

describe('OrderPlaced, when the delivery says an earlier attempt may have written', () => {
  it('a first delivery of a new order stays one batch, with no read', async () => {
    const t = orderFlow();
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1')))).toEqual({
      outcome: { kind: 'created' },
      trips: { reads: 0, commits: 1, queries: 0 },
    });
  });

  it('a redelivered duplicate is one point read and writes nothing', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 1, commits: 0, queries: 0 },
    });
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 7))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 1, commits: 0, queries: 0 },
    });
  });

  it('a first delivery of a duplicate (the producer sent it again) still costs the 409 and a read', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1')))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 1, commits: 1, queries: 0 },
    });
  });

  it('a redelivery whose first attempt died before its batch was written reads, finds nothing and stores the order: a read and the batch', async () => {
    const t = orderFlow();
    t.store.beforeCommit(createsOrder, crash);
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('retry');
    expect(await t.order('o1')).toBeUndefined();
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2))).toEqual({
      outcome: { kind: 'created' },
      trips: { reads: 1, commits: 1, queries: 0 },
    });
    expect(await t.order('o1')).toMatchObject({ orderId: 'o1', messageId: 'm-o1' });
  });

  it('a redelivered conflict is told apart on the read and recorded with its evidence: a read and the record batch', async () => {
    const t = orderFlow();
    await t.send('m-a', 'OrderPlaced', orderPlaced('o1'));
    const other = orderPlaced('o1', { customerId: 'other' });
    const first = await counted(t, () => t.send('m-b', 'OrderPlaced', other));
    expect(first).toMatchObject({ outcome: { kind: 'conflict' }, trips: { reads: 1, commits: 2, queries: 0 } });
    const again = await counted(t, () => t.send('m-b', 'OrderPlaced', other, 2));
    expect(again).toMatchObject({
      outcome: { kind: 'conflict', evidence: { docType: 'conflict', existing: { documentId: 'o1', messageId: 'm-a' } } },
      trips: { reads: 1, commits: 1, queries: 0 },
    });
    expect(t.memory.list('o1').filter((d) => (d as ConflictDocument).docType === 'conflict')).toHaveLength(1);
    expect(await t.order('o1')).toMatchObject({ customerId: 'c-42', messageId: 'm-a' });
  });

  it('a redelivery that finds no order, then meets the same order another instance stored between its read and its batch, is a duplicate (the 409 and one more read)', async () => {
    const t = orderFlow();
    const elsewhere = otherInstance(t);
    t.store.beforeCommit(createsOrder, async () => expect((await elsewhere('m-o1', 'OrderPlaced', orderPlaced('o1'), 2)).outcome).toEqual({ kind: 'created' }));
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 2, commits: 1, queries: 0 },
    });
    expect(t.memory.list('o1').filter((d) => (d as { docType?: string }).docType === 'outbox')).toHaveLength(1);
  });

  it('a redelivery that finds no order, then meets another payload stored between its read and its batch, is a conflict recorded with its evidence', async () => {
    const t = orderFlow();
    const elsewhere = otherInstance(t);
    t.store.beforeCommit(createsOrder, async () => expect((await elsewhere('m-a', 'OrderPlaced', orderPlaced('o1'))).outcome).toEqual({ kind: 'created' }));
    const other = orderPlaced('o1', { customerId: 'other' });
    const result = await counted(t, () => t.send('m-b', 'OrderPlaced', other, 2));
    expect(result).toMatchObject({
      outcome: { kind: 'conflict', evidence: { existing: { documentId: 'o1', messageId: 'm-a' } } },
      trips: { reads: 2, commits: 2, queries: 0 },
    });
    const conflicts = t.memory.list('o1').filter((d) => (d as ConflictDocument).docType === 'conflict') as ConflictDocument[];
    expect(conflicts).toEqual([expect.objectContaining({ dedupKey: 'm-b', incoming: expect.objectContaining({ messageId: 'm-b' }) })]);
    expect(await t.order('o1')).toMatchObject({ customerId: 'c-42' });
  });

  it('a redelivery that finds no order but an open arrival gate stores the order over the parked items, as a first delivery does', async () => {
    const t = orderFlow();
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    const result = await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2));
    // The read, the batch that meets the gate, the gate's read and the parked items' query, the batch over them.
    expect(result).toEqual({ outcome: { kind: 'created', appliedParked: 1, rejectedParked: [] }, trips: { reads: 2, commits: 2, queries: 1 } });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it("leaves anything but an order under the order's id to the batch and its 409, as a first delivery would", async () => {
    const t = orderFlow();
    await t.memory.commit('o1', [create({ id: orderDocumentId('o1'), orderId: 'o1', docType: 'something-else' } as StoredDocument)]);
    const result = await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 2));
    expect(result.outcome.kind).toBe('conflict');
    expect(t.store.commitLog[0]?.operations[0]).toMatchObject({ kind: 'create', document: { docType: 'order' } });
  });
});

describe('which deliveries read first: only what a sender cannot set', () => {
  it('a delayed-retry copy whose signed state verifies reads first: its duplicate is one point read', async () => {
    const t = orderFlow({ retryStateKey: testRetryStateKey });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const copy = await counted(t, () => t.send('copy-1', 'OrderPlaced', orderPlaced('o1'), 1, retryCopy('copy-1', 'm-o1')));
    expect(copy).toEqual({ outcome: { kind: 'duplicate' }, trips: { reads: 1, commits: 0, queries: 0 } });
  });

  it("verifies the copy over the key the delayed layer signed, without the consumer's prefix", async () => {
    const t = orderFlow({ retryStateKey: testRetryStateKey, consumerName: 'orders' });
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 1, { 'idempotency-key': 'm-o1' });
    const copy = await counted(t, () => t.send('copy-1', 'OrderPlaced', orderPlaced('o1'), 1, retryCopy('copy-1', 'm-o1')));
    expect(copy).toEqual({ outcome: { kind: 'duplicate' }, trips: { reads: 1, commits: 0, queries: 0 } });
  });

  it('forged retry properties (unsigned, or signed with another key) keep a first delivery on the first-delivery path', async () => {
    const t = orderFlow({ retryStateKey: testRetryStateKey });
    const unsigned = { 'retry-attempt': 3, 'retry-first-failure-at': '2026-11-30T11:00:00.000Z', 'retry-of': 'm-o1' };
    const forged = signedRetryProperties('m-o2', { dedupKey: 'm-o2', attempt: 1, firstFailureAt: '2026-11-30T11:00:00.000Z', root: 'm-o2' });
    const wrongKey = { ...forged, 'retry-signature': 'A'.repeat(43) };
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 1, unsigned))).toEqual({
      outcome: { kind: 'created' },
      trips: { reads: 0, commits: 1, queries: 0 },
    });
    expect(await counted(t, () => t.send('m-o2', 'OrderPlaced', orderPlaced('o2'), 1, wrongKey))).toEqual({
      outcome: { kind: 'created' },
      trips: { reads: 0, commits: 1, queries: 0 },
    });
    // A real copy's signed state moved onto another message does not verify there either.
    expect(await counted(t, () => t.send('m-o3', 'OrderPlaced', orderPlaced('o3'), 1, forged))).toEqual({
      outcome: { kind: 'created' },
      trips: { reads: 0, commits: 1, queries: 0 },
    });
    // Its duplicate goes the first delivery's way too: the 409 and a read.
    expect(await counted(t, () => t.send('m-o1', 'OrderPlaced', orderPlaced('o1'), 1, unsigned))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 1, commits: 1, queries: 0 },
    });
  });

  it('a wiring without a signing key verifies no copy: a copy is a first delivery', async () => {
    const t = orderFlow();
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'));
    const copy = await counted(t, () => t.send('copy-1', 'OrderPlaced', orderPlaced('o1'), 1, retryCopy('copy-1', 'm-o1')));
    expect(copy).toEqual({ outcome: { kind: 'duplicate' }, trips: { reads: 1, commits: 1, queries: 0 } });
  });
});

describe('PaymentReceived, when the delivery says an earlier attempt may have written', () => {
  async function placed(t: Flow): Promise<void> {
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
  }

  it("a first delivery pays no read of its marker: the order's read, the claim, the batch", async () => {
    const t = orderFlow();
    await placed(t);
    expect(await counted(t, () => t.send('pay-1', 'PaymentReceived', payment('o1')))).toEqual({
      outcome: { kind: 'created' },
      trips: { reads: 1, commits: 2, queries: 0 },
    });
  });

  it('a redelivered duplicate is one point read of its own inbox marker and writes nothing', async () => {
    const t = orderFlow();
    await placed(t);
    await t.send('pay-1', 'PaymentReceived', payment('o1'));
    expect(await counted(t, () => t.send('pay-1', 'PaymentReceived', payment('o1'), 2))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 1, commits: 0, queries: 0 },
    });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it("a redelivery of a parked payment applied with its order finds the marker the order's batch wrote", async () => {
    const t = orderFlow();
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('parked');
    await placed(t);
    expect(await counted(t, () => t.send('pay-1', 'PaymentReceived', payment('o1'), 2))).toEqual({
      outcome: { kind: 'duplicate' },
      trips: { reads: 1, commits: 0, queries: 0 },
    });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a redelivery whose first attempt died after its claim finds no marker and applies the payment once', async () => {
    const t = orderFlow();
    await placed(t);
    t.store.beforeCommit(touches('inbox'), crash);
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('retry');
    const again = await counted(t, () => t.send('pay-1', 'PaymentReceived', payment('o1'), 2));
    // Its marker's read, then the whole way: the order's read, the claim (409) and its read, the batch.
    expect(again).toEqual({ outcome: { kind: 'created' }, trips: { reads: 3, commits: 2, queries: 0 } });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a redelivery that finds no marker, while another instance applies the payment before its batch, is a duplicate counted once', async () => {
    const t = orderFlow();
    await placed(t);
    t.store.beforeCommit(touches('inbox'), crash);
    expect((await t.send('pay-1', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('retry');
    const elsewhere = otherInstance(t);
    t.store.beforeCommit(touches('inbox'), async () =>
      expect((await elsewhere('pay-1', 'PaymentReceived', payment('o1'), 3)).outcome).toEqual({ kind: 'created' }),
    );
    const again = await t.send('pay-1', 'PaymentReceived', payment('o1'), 2);
    expect(again.outcome).toEqual({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a redelivery under a key whose marker holds another payload is decided as its first delivery was, not by the marker', async () => {
    const t = orderFlow();
    await placed(t);
    await t.send('pay-1', 'PaymentReceived', payment('o1'));
    const other = payment('o1', { paymentId: 'P-2', currency: 'USD' });
    const first = await t.send('pay-1', 'PaymentReceived', other);
    const again = await t.send('pay-1', 'PaymentReceived', other, 2);
    expect(first.outcome).toMatchObject({ kind: 'invalid', error: { code: 'CurrencyMismatch' } });
    expect(again.outcome).toMatchObject({ kind: 'invalid', error: { code: 'CurrencyMismatch' } });
    expect(t.memory.list('o1').filter((d) => (d as ConflictDocument).docType === 'conflict')).toEqual([]);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it("a copy applied under the claimer's key, redelivered, finds no marker under its own key and is still a duplicate", async () => {
    const t = orderFlow();
    await placed(t);
    await t.send('pay-1', 'PaymentReceived', payment('o1'));
    expect((await t.send('pay-1b', 'PaymentReceived', payment('o1'))).outcome.kind).toBe('duplicate');
    expect(t.memory.list('o1').some((d) => d.id === inboxMarkerId('pay-1b'))).toBe(false);
    expect((await t.send('pay-1b', 'PaymentReceived', payment('o1'), 2)).outcome.kind).toBe('duplicate');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});
