import { describe, expect, it } from 'vitest';
import { fingerprintPayload } from '../../../src/idempotency/index.js';
import type { ConflictDocument } from '../../../src/orders/index.js';
import { messageIdNamingBody, newOutboxDocument, orderIntakeSource } from '../../../src/outbox/index.js';
import type { OutboxMessage } from '../../../src/outbox/index.js';
import { orderFlow } from '../../support/orderFlowHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';

// The intake's OrderPlaced as the consumer receives it. Its dedup key is CloudEvents source + id,
// and its id is the MessageId: the previous release's MessageId was the order id, this one's is the
// order id and the body's digest, so the two releases give one order two keys. The order document is
// the OrderPlaced marker and is compared by fingerprint, so which key a copy carries never decides
// duplicate or conflict: the body does.
type Flow = ReturnType<typeof orderFlow>;

function intakeMessage(orderId: string, body: unknown, messageId: string): OutboxMessage {
  return newOutboxDocument({
    id: `outbox|OrderPlaced|${orderId}`,
    orderId,
    eventType: 'OrderPlaced',
    destination: 'orders',
    body,
    createdAt: '2026-11-30T11:59:00Z',
    messageId,
    source: orderIntakeSource,
  }).message;
}
/** As this release's intake writes it. */
const current = (orderId: string, body = orderPlaced(orderId)) => intakeMessage(orderId, body, messageIdNamingBody(orderId, 'OrderPlaced', body));
/** As the previous release's intake wrote it (MessageId = the order id), still pending or in flight during a deploy. */
const previous = (orderId: string, body = orderPlaced(orderId)) => intakeMessage(orderId, body, orderId);

const deliver = (t: Flow, message: OutboxMessage, deliveryCount = 1) =>
  t.send(message.messageId, 'OrderPlaced', message.body, deliveryCount, message.applicationProperties as Record<string, string>);

describe("the intake's OrderPlaced at the consumer", () => {
  it("is keyed by its source and MessageId, the MessageId naming the order and the start of the consumer's own fingerprint of it", async () => {
    const t = orderFlow();
    const message = current('o1');
    expect(message.messageId).toMatch(/^o1~[0-9a-f]{32}$/);
    expect(fingerprintPayload('OrderPlaced', orderPlaced('o1')).startsWith(message.messageId.slice('o1~'.length))).toBe(true);
    expect(await deliver(t, message)).toMatchObject({ outcome: { kind: 'created' }, dedupKey: `${orderIntakeSource}|${message.messageId}` });
    expect(await t.order('o1')).toMatchObject({ messageId: message.messageId, dedupKey: `${orderIntakeSource}|${message.messageId}` });
  });

  it('is a duplicate when redelivered', async () => {
    const t = orderFlow();
    await deliver(t, current('o1'));
    expect((await deliver(t, current('o1'), 2)).outcome).toEqual({ kind: 'duplicate' });
  });

  it("is a duplicate, never a conflict, when the previous release's copy of the same order (MessageId = order id) comes after this release's, and the other way round", async () => {
    const after = orderFlow();
    await deliver(after, current('o1'));
    expect((await deliver(after, previous('o1'))).outcome).toEqual({ kind: 'duplicate' });
    const before = orderFlow();
    await deliver(before, previous('o1'));
    expect((await deliver(before, current('o1'))).outcome).toEqual({ kind: 'duplicate' });
    expect(before.memory.list('o1').filter((d) => (d as { docType?: string }).docType === 'conflict')).toEqual([]);
  });

  it("is a duplicate of a producer's OrderPlaced under the order id with the same body", async () => {
    const t = orderFlow();
    await t.send('o1', 'OrderPlaced', orderPlaced('o1'));
    expect((await deliver(t, current('o1'))).outcome).toEqual({ kind: 'duplicate' });
  });

  it("is a conflict, recorded with both MessageIds, after a producer's OrderPlaced under the order id with another body; and the producer's is one after it", async () => {
    const t = orderFlow();
    await t.send('o1', 'OrderPlaced', orderPlaced('o1', { customerId: 'c-direct' }));
    const intake = current('o1');
    const result = await deliver(t, intake);
    expect(result.outcome).toMatchObject({ kind: 'conflict', error: { code: 'PayloadConflict' } });
    const conflict = (result.outcome as { evidence?: ConflictDocument }).evidence;
    expect(conflict).toMatchObject({ orderId: 'o1', incoming: { messageId: intake.messageId }, existing: { messageId: 'o1', documentId: 'o1' } });
    expect(await t.order('o1')).toMatchObject({ customerId: 'c-direct' });
    const recorded = t.memory.list('o1').map((d) => d as { docType?: string; reason?: string; messageId?: string });
    expect(recorded.filter((d) => d.docType === 'conflict')).toEqual([
      expect.objectContaining({ incoming: expect.objectContaining({ messageId: intake.messageId }) }),
    ]);
    expect(recorded.filter((d) => d.docType === 'rejection')).toEqual([expect.objectContaining({ reason: 'PayloadConflict', messageId: intake.messageId })]);

    const reversed = orderFlow();
    await deliver(reversed, current('o1'));
    expect((await reversed.send('o1', 'OrderPlaced', orderPlaced('o1', { customerId: 'c-direct' }))).outcome).toMatchObject({ kind: 'conflict' });
  });
});
