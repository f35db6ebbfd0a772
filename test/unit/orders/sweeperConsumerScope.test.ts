import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import type { WriteOperation } from '../../../src/idempotency/index.js';
import { createOrderConsumer, createParkedItemSweeper } from '../../../src/orders/index.js';
import type { ConsumeResult, OrderDocument, ParkedItemDocument } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { InterleavingStore } from '../../support/interleavingStore.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';

// With CONSUMER_NAME set the consumer scopes the payment's dedup key (`billing|<key>`), its claim
// (`payment|billing|<paymentId>`) and its rejection records; the sweeper has no name. These schedules
// show that it needs none: it claims nothing and derives no id from a key; it applies and rejects a
// parked item under the key the consumer stored on it, so the consumer's later copies meet its work.
// Both roots are built from one set of settings, as the function app builds them.
const settings = loadSettings({
  ServiceBusConnection: 'Endpoint=sb://127.0.0.1;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
  COSMOS_KEY: 'a2V5',
  COSMOS_DATABASE: 'orders',
  COSMOS_ORDERS_CONTAINER: 'orders',
  RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
  DELAYED_RETRY_ENABLED: 'false',
  TRANSIENT_RETRY_IN_INVOCATION_MS: '0',
  PARKED_ITEM_HORIZON_SECONDS: '3600',
  PARKED_SWEEP_MIN_AGE_SECONDS: '60',
  CONSUMER_NAME: 'billing',
});

const crash = () => Promise.reject(new Error('the process died here'));

function deployed() {
  let nowMs = Date.parse('2026-11-30T12:00:00Z');
  const memory = new InMemoryDocumentStore(() => nowMs);
  const store = new InterleavingStore(memory);
  const overrides = { store, now: () => new Date(nowMs), sleep: () => Promise.resolve(), meter: new MeterProvider().getMeter('unit') };
  const consumer = createOrderConsumer(settings, overrides);
  const sweeper = createParkedItemSweeper(settings, overrides);
  let sequence = 0;
  const send = (messageId: string, subject: string, body: unknown, deliveryCount = 1, applicationProperties?: Record<string, string>): Promise<ConsumeResult> =>
    consumer.consume(
      envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: (sequence += 1), applicationProperties }),
      body,
      new RecordingLog(),
    );
  const order = async (orderId: string) => (await memory.read<OrderDocument>(orderId, orderId))?.document;
  const parked = (orderId: string) => memory.list(orderId).filter((d): d is ParkedItemDocument => (d as ParkedItemDocument).docType === 'parked');
  const ids = (partition: string, docType: string) =>
    memory
      .list(partition)
      .filter((d) => (d as { docType?: string }).docType === docType)
      .map((d) => d.id);
  return { memory, store, send, sweep: () => sweeper.sweep(new RecordingLog()), order, parked, ids, advance: (seconds: number) => (nowMs += seconds * 1000) };
}

/** The drain that follows an order's first batch: it replaces the order the batch created. */
const drainOf = (orderId: string) => (partitionKey: string, operations: readonly WriteOperation[]) =>
  partitionKey === orderId && operations[0]?.kind === 'replace' && (operations[0].document as { docType?: string }).docType === 'order';

describe('the parked-item sweeper and a consumer with CONSUMER_NAME', () => {
  it("a payment the sweeper applied (the order's drain died) is a duplicate when it comes again, in every form; another payload under its paymentId is a conflict", async () => {
    const t = deployed();
    // 49 payments parked: the order's batch holds 48 of them (2 operations each), the drain the last.
    for (let n = 1; n <= 49; n += 1) {
      expect((await t.send(`pay-${n}`, 'PaymentReceived', paymentReceived('o1', { paymentId: `P-${n}`, amount: 1 }))).outcome.kind).toBe('parked');
      t.advance(1);
    }
    t.store.beforeCommit(drainOf('o1'), crash);
    await t.send('m-o1', 'OrderPlaced', orderPlaced('o1', { lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 100 }] }));
    expect(await t.order('o1')).toMatchObject({ amountPaid: 48, paymentCount: 48 });
    expect(
      t
        .parked('o1')
        .filter((p) => p.state === 'parked')
        .map((p) => p.dedupKey),
    ).toEqual(['billing|pay-49']);
    // Its redelivery is decided on the stored order, and leaves the rest to the sweeper.
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1', { lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 100 }] }), 2)).outcome.kind).toBe(
      'duplicate',
    );
    t.advance(120);

    expect(await t.sweep()).toMatchObject({ applied: 1, rejected: [] });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 49, paymentCount: 49, claimedPaymentCount: 49 });

    const last = paymentReceived('o1', { paymentId: 'P-49', amount: 1 });
    expect((await t.send('pay-49', 'PaymentReceived', last, 2)).outcome.kind, 'its redelivery').toBe('duplicate');
    expect((await t.send('pay-49', 'PaymentReceived', last, 1)).outcome.kind, 'a copy under the same MessageId').toBe('duplicate');
    expect(
      (await t.send('pay-49-copy', 'PaymentReceived', { ...last, receivedAt: '2026-11-30T09:05:00Z' })).outcome.kind,
      'a copy under another MessageId',
    ).toBe('duplicate');
    expect((await t.send('pay-49~resubmit-1', 'PaymentReceived', last, 1, { 'idempotency-key': 'pay-49' })).outcome.kind, 'a resubmitted copy').toBe(
      'duplicate',
    );
    expect((await t.send('pay-49-other', 'PaymentReceived', { ...last, amount: 2 })).outcome.kind, 'another amount').toBe('conflict');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 49, paymentCount: 49 });
    // The sweeper's marker is the consumer's, under the scoped key; the claim only the scoped one.
    expect(t.ids('o1', 'inbox')).toContain('inbox|billing%7Cpay-49');
    expect(t.ids('o1', 'inbox')).toHaveLength(49);
    expect([t.ids('#payment|billing|P-49', 'payment-claim'), t.ids('#payment|P-49', 'payment-claim')]).toEqual([['payment|billing|P-49'], []]);
  });

  it('a payment the sweeper rejected (OrderNeverArrived) is applied once when it comes back, as a copy and as a resubmit, and its order then comes', async () => {
    const t = deployed();
    const payment = paymentReceived('o2', { paymentId: 'P-1', amount: 5 });
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('parked');
    t.advance(7200);
    expect((await t.sweep()).rejected).toEqual([expect.objectContaining({ dedupKey: 'billing|pay-1', reason: 'OrderNeverArrived' })]);

    // The claim (scoped) names the same payment: the copy goes on under the claimer's key and finds
    // the item the sweeper rejected under that key, so it parks it afresh: one item, one effect.
    expect((await t.send('pay-1-copy', 'PaymentReceived', payment)).outcome.kind).toBe('parked');
    // The operator's resubmit (the producer's key, no prefix; the consumer adds it) finds that item waiting.
    expect((await t.send('pay-1~resubmit-1', 'PaymentReceived', payment, 1, { 'idempotency-key': 'pay-1' })).outcome.kind).toBe('duplicate');
    expect((await t.send('m-o2', 'OrderPlaced', orderPlaced('o2'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1, rejectedParked: [] });
    expect((await t.send('pay-1', 'PaymentReceived', payment, 2)).outcome.kind).toBe('duplicate');
    expect(await t.order('o2')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(t.parked('o2').map((p) => [p.dedupKey, p.messageId, p.state])).toEqual([['billing|pay-1', 'pay-1-copy', 'applied']]);
  });
});
