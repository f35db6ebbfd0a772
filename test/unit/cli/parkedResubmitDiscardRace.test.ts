import type { ServiceBusMessage } from '@azure/service-bus';
import { describe, expect, it } from 'vitest';
import { discardParked, listParked, resubmitParked, selectableStates } from '../../../src/cli/parkedCommands.js';
import type { ParkedActionReport, ParkedContext } from '../../../src/cli/parkedCommands.js';
import { sweepParkedItems } from '../../../src/orders/index.js';
import { touches } from '../../support/interleavingStore.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { parkedContext } from '../../support/parkedContext.js';

const retention = { markerTtlSeconds: 30 * 86_400, marginSeconds: 90_000, marginExplanation: 'the defaults' };
const policy = { retention };
const one = { targets: ['pay-1'], all: false };
type Flow = ReturnType<typeof orderFlow>;

/** A payment parked, rejected OrderNeverArrived by the sweeper, and its order stored since: a resubmit applies it. */
async function rejectedPaymentWithItsOrderStored(): Promise<Flow> {
  const t = orderFlow({ markerTtlSeconds: parkedItemTtlSeconds });
  expect((await t.send('pay-1', 'PaymentReceived', paymentReceived('o1', { amount: 5 }))).outcome).toMatchObject({ kind: 'parked' });
  t.advance(7200);
  expect((await sweepParkedItems(t.ctx, { horizonSeconds: 3600, minAgeSeconds: 0, maxItemsPerRun: 100 })).rejected).toHaveLength(1);
  expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome).toMatchObject({ kind: 'created' });
  return t;
}

/** A context whose sends are only recorded. */
function capturing(t: Flow): { ctx: ParkedContext; sent: ServiceBusMessage[] } {
  const sent: ServiceBusMessage[] = [];
  return { sent, ctx: parkedContext(t, async (m) => void sent.push(m)) };
}

const deliver = (t: Flow, copy: ServiceBusMessage) =>
  t.send(String(copy.messageId), String(copy.subject), copy.body, 1, copy.applicationProperties as Record<string, string>);

const itemState = (t: Flow) => t.parked('o1').find((p) => p.dedupKey === 'pay-1')?.state;

describe('parked resubmit and parked discard of one item at once', () => {
  it('never reports a discard done when the resubmit sent at the same time applies the effect', async () => {
    const t = await rejectedPaymentWithItsOrderStored();
    const sent: ServiceBusMessage[] = [];
    let discarded: ParkedActionReport[] = [];
    // The other operator's discard runs while this run's copy is on its way.
    const ctx: ParkedContext = parkedContext(t, async (m) => {
      discarded = await discardParked(ctx, one, false);
      sent.push(m);
    });
    const resubmitted = await resubmitParked(ctx, one, false, policy);
    expect(resubmitted).toMatchObject([{ outcome: 'resubmitted' }]);
    const copy = sent[0] as ServiceBusMessage;
    await deliver(t, copy);

    // A discard reported done means the effect never happens.
    const paid = (await t.order('o1'))?.amountPaid;
    expect({ discard: discarded[0]?.outcome, paid }).not.toEqual({ discard: 'discarded', paid: 5 });
    expect(discarded).toMatchObject([{ outcome: 'refused', detail: expect.stringContaining('parked resubmit') as unknown }]);
    expect(itemState(t)).toBe('resubmitted');
  });

  it('a discard that commits between the resubmit listing the item and claiming it makes the resubmit send nothing', async () => {
    const t = await rejectedPaymentWithItsOrderStored();
    const { ctx, sent } = capturing(t);
    let discarded: ParkedActionReport[] = [];
    // The resubmit has listed the item as rejected; the discard writes before the resubmit's first write to it.
    t.store.beforeCommit(touches('parked'), async () => (discarded = await discardParked(ctx, one, false)));

    const resubmitted = await resubmitParked(ctx, one, false, policy);

    expect(discarded).toMatchObject([{ outcome: 'discarded' }]);
    expect(sent, 'a copy of a discarded item').toEqual([]);
    expect(resubmitted).toMatchObject([{ outcome: 'failed' }]);
    expect(itemState(t)).toBe('discarded');
    expect((await t.order('o1'))?.amountPaid).toBe(0);
  });

  it('a resubmit that claims the item between the discard listing it and writing it makes the discard fail, not report done', async () => {
    const t = await rejectedPaymentWithItsOrderStored();
    const { ctx, sent } = capturing(t);
    let resubmitted: ParkedActionReport[] = [];
    // The discard has listed the item as rejected; the whole resubmit runs before the discard's write.
    t.store.beforeCommit(touches('parked'), async () => (resubmitted = await resubmitParked(ctx, one, false, policy)));

    const discarded = await discardParked(ctx, one, false);

    expect(resubmitted).toMatchObject([{ outcome: 'resubmitted' }]);
    expect(discarded).toMatchObject([{ outcome: 'failed', detail: expect.stringContaining('claimed by a resubmit') as unknown }]);
    await deliver(t, sent[0] as ServiceBusMessage);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(itemState(t)).toBe('resubmitted');
  });

  it('a discard refuses an item a resubmit claimed and died with, and the next resubmit sends it', async () => {
    const t = await rejectedPaymentWithItsOrderStored();
    // The first run claims the item and dies on its way to the queue: its send never returns.
    let reachedSend: () => void = () => undefined;
    const atSend = new Promise<void>((reached) => (reachedSend = reached));
    void resubmitParked(
      parkedContext(t, () => (reachedSend(), new Promise<void>(() => undefined))),
      one,
      false,
      policy,
    );
    await atSend;

    const { ctx, sent } = capturing(t);
    expect(itemState(t), 'claimed before the send').toBe('resubmitting');
    // `parked list` shows it by default, with its state and when it was claimed.
    expect(await listParked(ctx, selectableStates, {}, { max: 1000, scanMax: 100_000, stopped: () => undefined })).toMatchObject([
      { id: 'parked|payment|pay-1', state: 'resubmitting', reason: 'OrderNeverArrived', resubmitClaimedAt: t.ctx.now().toISOString() },
    ]);
    expect(await discardParked(ctx, one, true), 'the plan').toMatchObject([{ outcome: 'refused' }]);
    const refused = await discardParked(ctx, one, false);
    expect(refused).toMatchObject([{ outcome: 'refused', detail: expect.stringContaining('parked resubmit') as unknown }]);
    expect(itemState(t)).toBe('resubmitting');

    // The next run takes the claimed item up again and sends it.
    expect(await resubmitParked(ctx, one, false, policy)).toMatchObject([{ outcome: 'resubmitted' }]);
    expect(sent).toHaveLength(1);
    expect(itemState(t)).toBe('resubmitted');
    // The died run's copy may have reached the queue after all: the consumer absorbs the second one.
    await deliver(t, sent[0] as ServiceBusMessage);
    expect((await deliver(t, sent[0] as ServiceBusMessage)).outcome).toMatchObject({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });

  it('a send that failed leaves the item claimed: the copy may have gone, so a discard is refused until a resubmit finishes', async () => {
    const t = await rejectedPaymentWithItsOrderStored();
    const lost: ServiceBusMessage[] = [];
    // The broker took the copy, but its answer was lost.
    const failing = parkedContext(t, async (m) => {
      lost.push(m);
      throw new Error('connection reset');
    });
    expect(await resubmitParked(failing, one, false, policy)).toMatchObject([
      { outcome: 'failed', detail: expect.stringContaining('resubmitting') as unknown },
    ]);
    expect(itemState(t)).toBe('resubmitting');
    const { ctx, sent } = capturing(t);
    expect(await discardParked(ctx, one, false)).toMatchObject([{ outcome: 'refused' }]);
    await deliver(t, lost[0] as ServiceBusMessage);
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });

    expect(await resubmitParked(ctx, one, false, policy)).toMatchObject([{ outcome: 'resubmitted' }]);
    expect((await deliver(t, sent[0] as ServiceBusMessage)).outcome).toMatchObject({ kind: 'duplicate' });
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
    expect(itemState(t)).toBe('resubmitted');
  });

  it('two resubmit runs of one claimed item: the one whose claim was taken over right after sends nothing', async () => {
    const t = await rejectedPaymentWithItsOrderStored();
    const first = capturing(t);
    const second = capturing(t);
    let secondReports: ParkedActionReport[] = [];
    // Between the first run's claim and its read-back, the second run claims the item again and finishes.
    t.store.beforeRead(
      (_pk, id) => id === 'parked|payment|pay-1',
      async () => (secondReports = await resubmitParked(second.ctx, one, false, policy)),
    );
    const firstReports = await resubmitParked(first.ctx, one, false, policy);

    expect(secondReports).toMatchObject([{ outcome: 'resubmitted' }]);
    expect(firstReports).toMatchObject([{ outcome: 'failed', detail: expect.stringContaining('right after this run claimed it') as unknown }]);
    expect([first.sent.length, second.sent.length]).toEqual([0, 1]);
    expect(itemState(t)).toBe('resubmitted');
  });
});
