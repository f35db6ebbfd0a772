import type { ServiceBusMessage } from '@azure/service-bus';
import { describe, expect, it } from 'vitest';
import { resubmitParked } from '../../../src/cli/parkedCommands.js';
import { sweepParkedItems } from '../../../src/orders/index.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { parkedContext } from '../../support/parkedContext.js';

// `parked resubmit` end to end over the real flows: the item's copy, sent back to the queue, meets
// its own item (the order still missing) or the order, and must be the same request both times.
type Flow = ReturnType<typeof orderFlow>;

/** Parks a payment, lets the sweeper reject it as OrderNeverArrived, and resubmits it: the copy. */
async function resubmittedCopyOf(t: Flow, body: Record<string, unknown>): Promise<ServiceBusMessage> {
  expect((await t.send('pay-1', 'PaymentReceived', body)).outcome).toMatchObject({ kind: 'parked' });
  t.advance(7200);
  const swept = await sweepParkedItems(t.ctx, { horizonSeconds: 3600, minAgeSeconds: 0, maxItemsPerRun: 100 });
  expect(swept.rejected).toHaveLength(1);
  const sent: ServiceBusMessage[] = [];
  const ctx = parkedContext(t, async (m) => void sent.push(m));
  const retention = { markerTtlSeconds: 30 * 86_400, marginSeconds: 90_000, marginExplanation: 'the defaults' };
  const [report] = await resubmitParked(ctx, { targets: ['pay-1'], all: false }, false, { retention });
  expect(report?.outcome).toBe('resubmitted');
  expect(sent).toHaveLength(1);
  return sent[0] as ServiceBusMessage;
}

const redeliver = (t: Flow, copy: ServiceBusMessage) =>
  t.send(String(copy.messageId), String(copy.subject), copy.body, 1, copy.applicationProperties as Record<string, string>);

describe('parked resubmit', () => {
  it('sends a copy that is the same request as the item, although the payment carried fields the schema ignores', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const copy = await resubmittedCopyOf(t, { ...paymentReceived('o1', { amount: 5 }), type: 'PaymentReceived', note: 'from the till' });
    expect((await redeliver(t, copy)).outcome).toMatchObject({ kind: 'parked' });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('sends exactly the body that was received, extra fields included', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const body = { ...paymentReceived('o1', { amount: 5 }), type: 'PaymentReceived', note: 'from the till' };
    const copy = await resubmittedCopyOf(t, body);
    expect(typeof copy.body === 'string' ? JSON.parse(copy.body) : copy.body).toEqual(body);
  });

  // A sender who knows the tool's conventions could send `pay-1~resubmit-1` first: the broker would
  // drop the copy as its duplicate, and the item, marked resubmitted, would never be applied.
  it('sends the copy under a MessageId no sender can send first: the count, then 12 random hex digits, counted on from a copy', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const copy = await resubmittedCopyOf(t, paymentReceived('o1', { amount: 5 }));
    expect(String(copy.messageId)).toMatch(/^pay-1~resubmit-1-[0-9a-f]{12}$/);
    expect(copy.applicationProperties).toMatchObject({ 'idempotency-key': 'pay-1', 'resubmit-count': 1 });
    // The copy parks afresh, is rejected again and resubmitted again: the count goes on, one suffix.
    expect((await redeliver(t, copy)).outcome).toMatchObject({ kind: 'parked' });
    t.advance(7200);
    expect((await sweepParkedItems(t.ctx, { horizonSeconds: 3600, minAgeSeconds: 0, maxItemsPerRun: 100 })).rejected).toHaveLength(1);
    const sent: ServiceBusMessage[] = [];
    const ctx = parkedContext(t, async (m) => void sent.push(m));
    const retention = { markerTtlSeconds: 30 * 86_400, marginSeconds: 90_000, marginExplanation: 'the defaults' };
    expect((await resubmitParked(ctx, { targets: ['pay-1'], all: false }, false, { retention }))[0]?.outcome).toBe('resubmitted');
    expect(String(sent[0]?.messageId)).toMatch(/^pay-1~resubmit-2-[0-9a-f]{12}$/);
    expect(sent[0]?.applicationProperties).toMatchObject({ 'idempotency-key': 'pay-1', 'resubmit-count': 2 });
  });
});
