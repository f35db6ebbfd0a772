import type { ServiceBusMessage } from '@azure/service-bus';
import { describe, expect, it } from 'vitest';
import { resubmitParked } from '../../../src/cli/parkedCommands.js';
import { create, fingerprintPayload } from '../../../src/idempotency/index.js';
import { idempotencyKeyProperty, sweepParkedItems } from '../../../src/orders/index.js';
import type { ParkedItemDocument } from '../../../src/orders/index.js';
import { parkingLot } from '../../../src/orders/parkedItems.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { parkedContext } from '../../support/parkedContext.js';

// `resubmitting` is a state the operator tool writes (a `parked resubmit` run claims the item before
// it sends its copy). The flows never write it, and their code (src/orders) is the previous
// release's, unchanged but for the state's type: these tests show what a consumer and a sweeper of
// either release do with such an item during a deploy. For them it is as `rejected`: not waiting, not
// applied by its order's batch or the sweeper, and a copy of its message parks it afresh.
const retention = { markerTtlSeconds: 30 * 86_400, marginSeconds: 90_000, marginExplanation: 'the defaults' };
const one = { targets: ['pay-1'], all: false };
const sweep = { horizonSeconds: 3600, minAgeSeconds: 0, maxItemsPerRun: 100 };
type Flow = ReturnType<typeof orderFlow>;

async function rejectedPayment(): Promise<Flow> {
  const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
  expect((await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }))).outcome).toMatchObject({ kind: 'parked' });
  t.advance(7200);
  expect((await sweepParkedItems(t.ctx, sweep)).rejected).toHaveLength(1);
  return t;
}

const deliver = (t: Flow, copy: ServiceBusMessage) =>
  t.send(String(copy.messageId), String(copy.subject), copy.body, 1, copy.applicationProperties as Record<string, string>);

describe('a parked item a resubmit claimed (resubmitting), as the flows see it', () => {
  it('its copy, consumed before the run marks it, parks it afresh; the run reports the copy took it over; its order applies it once', async () => {
    const t = await rejectedPayment();
    const ctx = parkedContext(t, async (copy) => {
      expect(t.parked('o1')).toMatchObject([{ state: 'resubmitting' }]);
      expect((await deliver(t, copy)).outcome).toMatchObject({ kind: 'parked' });
    });
    expect(await resubmitParked(ctx, one, false, { retention })).toMatchObject([
      { outcome: 'resubmitted', detail: expect.stringContaining('the copy has already taken the item over') as unknown },
    ]);
    const [item] = t.parked('o1');
    expect(item).toMatchObject({ state: 'parked' });
    expect(item?.resubmitClaim, 'a fresh item: the claim went with the rejected one').toBeUndefined();
    expect(item?.ttl).toBe(parkedItemTtlSeconds);

    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('neither the sweeper nor its order applies or rejects it: it waits, with its TTL, for the next resubmit', async () => {
    const t = await rejectedPayment();
    // The run claims the item and dies on its way to the queue.
    let reachedSend: () => void = () => undefined;
    const atSend = new Promise<void>((reached) => (reachedSend = reached));
    void resubmitParked(
      parkedContext(t, () => (reachedSend(), new Promise<void>(() => undefined))),
      one,
      false,
      { retention },
    );
    await atSend;
    expect(t.parked('o1')).toMatchObject([{ state: 'resubmitting', rejection: { reason: 'OrderNeverArrived' }, ttl: parkedItemTtlSeconds }]);

    t.advance(7200);
    expect(await sweepParkedItems(t.ctx, sweep)).toMatchObject({ examined: 0, applied: 0, rejected: [] });
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 0 });
    expect(await sweepParkedItems(t.ctx, sweep)).toMatchObject({ examined: 0, applied: 0, rejected: [] });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 0, paymentCount: 0 });
    expect(t.parked('o1')).toMatchObject([{ state: 'resubmitting' }]);

    const sent: ServiceBusMessage[] = [];
    expect(
      await resubmitParked(
        parkedContext(t, async (m) => void sent.push(m)),
        one,
        false,
        { retention },
      ),
    ).toMatchObject([{ outcome: 'resubmitted' }]);
    expect((await deliver(t, sent[0] as ServiceBusMessage)).outcome).toMatchObject({ kind: 'created' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(t.parked('o1')).toMatchObject([{ state: 'resubmitted', ttl: 3600 }]);
  });

  it('behind a gate the release before claims opened, its copy is not taken for a live payment: parked afresh, applied once', async () => {
    const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
    const payment = paymentReceived('o1', { paymentId: 'P-9', amount: 7 });
    // A payment the release before claims parked (no claim, an unmarked gate), rejected, then claimed by a resubmit.
    const item = {
      id: 'parked|payment|msg-p9',
      orderId: 'o1',
      docType: 'parked',
      state: 'resubmitting',
      messageType: 'PaymentReceived',
      messageId: 'msg-p9',
      dedupKey: 'msg-p9',
      fingerprint: fingerprintPayload('PaymentReceived', payment),
      payload: payment,
      parkedAt: '2026-11-30T10:00:00.000Z',
      rejection: { reason: 'OrderNeverArrived', description: 'waited', rejectedAt: '2026-11-30T11:00:00.000Z' },
      resubmitClaim: { claimedAt: '2026-11-30T11:30:00.000Z', run: 'r-1' },
      ttl: parkedItemTtlSeconds,
    } as ParkedItemDocument;
    await t.memory.commit('o1', [create(parkingLot('o1', 'open', '2026-11-30T10:00:00.000Z')), create(item)]);

    const copy = await t.send('msg-p9~resubmit-1', 'PaymentReceived', payment, 1, { [idempotencyKeyProperty]: 'msg-p9' });
    expect(copy.outcome).toMatchObject({ kind: 'parked' });
    expect(t.parked('o1')).toMatchObject([{ state: 'parked', dedupKey: 'msg-p9' }]);
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created', appliedParked: 1 });
    expect((await t.send('msg-p9', 'PaymentReceived', payment, 2)).outcome).toMatchObject({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 7, paymentCount: 1 });
  });
});
