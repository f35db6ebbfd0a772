import { describe, expect, it } from 'vitest';
import { rejectedMessagesPartition, rejectionDocumentId } from '../../../src/consumer/index.js';
import type { RejectionDocument } from '../../../src/consumer/index.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import type { CarrierClient } from '../../../src/shipments/index.js';
import { InterleavingStore } from '../../support/interleavingStore.js';
import { RecordingLog } from '../../support/recordingLog.js';
import { TestClock, shipmentConsumer, storedOrderWithEvent } from '../../support/shipmentHarness.js';

// The fulfilment consumer runs the one pipeline, so it has what the orders consumer has: an
// unreadable event it rejected is answered from memory on its redeliveries, and a body cannot pose
// as a redelivery of another broker message.
const refusingCarrier: CarrierClient = {
  book: () => Promise.reject(new Error('an unreadable event must never reach the carrier')),
  lookup: () => Promise.reject(new Error('an unreadable event must never reach the carrier')),
};

function setUp() {
  const clock = new TestClock();
  const store = new InterleavingStore(new InMemoryDocumentStore(() => clock.now().getTime()));
  return { clock, store, consumer: shipmentConsumer({ store, carrier: refusingCarrier, now: clock.now, leaseMs: 60_000 }) };
}

describe('an unreadable OrderAccepted event', () => {
  it('is rejected once with its record, and its redeliveries on this instance cost no store call', async () => {
    const t = setUp();
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    const envelope = { ...delivery.envelope, messageId: 'bad-event', sequenceNumber: 12 };
    const first = await t.consumer.consume(envelope, { orderId: delivery.orderId }, new RecordingLog());
    expect(first).toMatchObject({ outcome: { kind: 'invalid', error: { code: 'SchemaViolation' } }, type: 'OrderAccepted' });
    expect(
      (await t.store.read<RejectionDocument>(rejectedMessagesPartition('bad-event'), rejectionDocumentId('bad-event', 'fulfilment')))?.document.reason,
    ).toBe('SchemaViolation');
    t.store.reads = t.store.commits = 0;
    const again = await t.consumer.consume({ ...envelope, deliveryCount: 2 }, { orderId: delivery.orderId }, new RecordingLog());
    expect(again.outcome).toMatchObject({ kind: 'invalid', error: { code: 'SchemaViolation' } });
    expect([t.store.reads, t.store.commits]).toEqual([0, 0]);
  });

  it("whose body names a sequence number is never answered from memory: the broker's fields only", async () => {
    const t = setUp();
    const delivery = await storedOrderWithEvent(t.store, t.clock.now());
    const envelope = { ...delivery.envelope, messageId: 'bad-event-2', sequenceNumber: 13 };
    const body = { orderId: delivery.orderId, SequenceNumber: 13 };
    await t.consumer.consume(envelope, body, new RecordingLog());
    t.store.reads = t.store.commits = 0;
    await t.consumer.consume({ ...envelope, deliveryCount: 2 }, body, new RecordingLog());
    // Not recalled: the redelivery reads its own record (the one point read in `#rejected-<n>`) and stops there.
    expect(t.store.reads).toBeGreaterThan(0);
  });
});
