import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create, fingerprintPayload } from '../../../src/idempotency/index.js';
import type { StoredDocument } from '../../../src/idempotency/index.js';
import { OrderConsumer } from '../../../src/orders/index.js';
import type { ConsumeResult, OrderDocument } from '../../../src/orders/index.js';
import { parkingLot } from '../../../src/orders/parkedItems.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { RecordingLog } from '../../support/recordingLog.js';

// Consumers with different CONSUMER_NAMEs sharing a container each apply a payment once, under
// their own keys and claims (orderConsumer.test.ts). A payment the release before claims stored for
// an order makes a consumer look for the paymentId among the order's markers (or parked items)
// before it claims: what another consumer stored there is not this consumer's payment.
const store = () => new InMemoryDocumentStore(() => Date.parse('2026-11-30T12:00:00Z'));
const consumerOn = (memory: InMemoryDocumentStore, consumerName: string) =>
  new OrderConsumer({
    store: memory,
    consumerName,
    now: () => new Date('2026-11-30T12:00:00Z'),
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 5,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
  });
let sequence = 0;
const send = async (consumer: OrderConsumer, messageId: string, subject: string, body: unknown, deliveryCount = 1): Promise<ConsumeResult['outcome']['kind']> =>
  (await consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: (sequence += 1) }), body, new RecordingLog()))
    .outcome.kind;

const legacy = paymentReceived('o1', { paymentId: 'P-9', amount: 7 });
const legacyFields = (consumerName: string) => ({
  orderId: 'o1',
  messageType: 'PaymentReceived',
  messageId: 'msg-p9',
  dedupKey: `${consumerName}|msg-p9`,
  fingerprint: fingerprintPayload('PaymentReceived', legacy),
  payload: legacy,
  ttl: 3600,
});

/** The order as the release before claims left it for `billing`: one payment applied, no claim, its marker. */
async function storedByPreviousRelease(memory: InMemoryDocumentStore): Promise<void> {
  await send(consumerOn(memory, 'billing'), 'm-o1', 'OrderPlaced', orderPlaced('o1'));
  const current = (await memory.read<OrderDocument>('o1', 'o1'))!;
  const { claimedPaymentCount: _dropped, ...order } = { ...current.document, amountPaid: 7, paymentCount: 1 } as OrderDocument & {
    claimedPaymentCount?: number;
  };
  await memory.commit('o1', [
    { kind: 'replace', document: order, ifMatch: current.etag },
    create({ id: 'inbox|billing%7Cmsg-p9', docType: 'inbox', processedAt: '2026-11-30T11:00:00Z', ...legacyFields('billing') } as StoredDocument),
  ]);
}

describe('payments the release before claims stored, with consumers sharing a container', () => {
  it('a payment one consumer applied on such an order is still applied, once, by another', async () => {
    const memory = store();
    await storedByPreviousRelease(memory);
    const [billing, audit] = [consumerOn(memory, 'billing'), consumerOn(memory, 'audit')];
    const payment = paymentReceived('o1', { paymentId: 'P-1', amount: 5 });
    expect(await send(billing, 'pay-1', 'PaymentReceived', payment)).toBe('created');
    expect(await send(audit, 'pay-1', 'PaymentReceived', payment)).toBe('created');
    expect([await send(billing, 'pay-1', 'PaymentReceived', payment, 2), await send(audit, 'pay-1', 'PaymentReceived', payment, 2)]).toEqual([
      'duplicate',
      'duplicate',
    ]);
    expect((await memory.read<OrderDocument>('o1', 'o1'))?.document).toMatchObject({ amountPaid: 17, paymentCount: 3 });
  });

  it('the payment of the release before is still found by the consumer that stored it, in every form', async () => {
    const memory = store();
    await storedByPreviousRelease(memory);
    const billing = consumerOn(memory, 'billing');
    expect(await send(billing, 'msg-p9', 'PaymentReceived', legacy, 2)).toBe('duplicate');
    expect(await send(billing, 'msg-p9-copy', 'PaymentReceived', legacy)).toBe('duplicate');
    expect(await send(billing, 'msg-p9-other', 'PaymentReceived', { ...legacy, amount: 8 })).toBe('conflict');
    expect((await memory.read<OrderDocument>('o1', 'o1'))?.document).toMatchObject({ amountPaid: 7, paymentCount: 1 });
  });

  it("a payment another consumer parked before claims is not this consumer's: it parks its own, and the order applies both", async () => {
    const memory = store();
    // A gate the release before opened (unmarked) and billing's payment parked behind it, no claim.
    await memory.commit('o1', [
      create(parkingLot('o1', 'open', '2026-11-30T11:00:00Z')),
      create({
        id: 'parked|payment|billing%7Cmsg-p9',
        docType: 'parked',
        state: 'parked',
        parkedAt: '2026-11-30T11:00:00Z',
        ...legacyFields('billing'),
      } as StoredDocument),
    ]);
    const audit = consumerOn(memory, 'audit');
    expect(await send(audit, 'msg-p9', 'PaymentReceived', legacy)).toBe('parked');
    expect(await send(consumerOn(memory, 'billing'), 'msg-p9-copy', 'PaymentReceived', legacy)).toBe('duplicate');
    expect(await send(audit, 'm-o1', 'OrderPlaced', orderPlaced('o1'))).toBe('created');
    expect((await memory.read<OrderDocument>('o1', 'o1'))?.document).toMatchObject({ amountPaid: 14, paymentCount: 2 });
  });
});
