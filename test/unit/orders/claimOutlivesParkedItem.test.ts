import type { ServiceBusMessage } from '@azure/service-bus';
import { describe, expect, it } from 'vitest';
import { resubmitParked } from '../../../src/cli/parkedCommands.js';
import { sweepParkedItems } from '../../../src/orders/index.js';
import { orderFlow, parkedItemTtlSeconds } from '../../support/orderFlowHarness.js';
import { orderPlaced, paymentReceived } from '../../support/orderMessages.js';
import { parkedContext } from '../../support/parkedContext.js';

// A payment's claim is written once, with twice the marker retention (paymentClaims.ts), and its
// parked item waits a horizon per round: rejected OrderNeverArrived, resubmitted by an operator,
// parked afresh, again and again, each resubmit inside the operators' horizon of the last parking.
// The claim must still be there for as long as the item it guards can be applied, and the marker
// that application writes after it; else a copy of the payment under another MessageId claims the
// paymentId afresh and is counted beside it.
type Flow = ReturnType<typeof orderFlow>;
const ttl = parkedItemTtlSeconds;
const claimLife = 2 * ttl;
const horizonSeconds = 3600;
const sweep = { horizonSeconds, minAgeSeconds: 60, maxItemsPerRun: 100 };
const policy = { retention: { markerTtlSeconds: ttl, marginSeconds: 60, marginExplanation: 'the test' } };
const payment = paymentReceived('o1', { paymentId: 'P-1', amount: 5 });

const deliver = (t: Flow, copy: ServiceBusMessage) =>
  t.send(String(copy.messageId), String(copy.subject), copy.body, 1, copy.applicationProperties as Record<string, string>);

/** The clock moved to `atSeconds` after the start. */
function at(t: Flow, atSeconds: number, startMs: number): void {
  t.advance(atSeconds - (t.ctx.now().getTime() - startMs) / 1000);
}

/** Rejected OrderNeverArrived once its horizon passed, then resubmitted at `resubmitAt`: parked afresh. */
async function rejectedAndResubmitted(t: Flow, startMs: number, parkedAt: number, resubmitAt: number): Promise<void> {
  at(t, parkedAt + horizonSeconds + 61, startMs);
  expect((await sweepParkedItems(t.ctx, sweep)).rejected).toEqual([expect.objectContaining({ reason: 'OrderNeverArrived' })]);
  at(t, resubmitAt, startMs);
  const ctx = parkedContext(t, async (copy) => expect((await deliver(t, copy)).outcome.kind).toBe('parked'));
  expect(await resubmitParked(ctx, { targets: ['pay-1'], all: false }, false, policy)).toEqual([expect.objectContaining({ outcome: 'resubmitted' })]);
  expect(t.parked('o1')).toEqual([expect.objectContaining({ state: 'parked' })]);
}

describe('a payment claim and the parked item it guards, through rounds of OrderNeverArrived and resubmits', () => {
  it('a copy under another MessageId, arriving after the first claim’s life while the item is parked again: a duplicate, counted once', async () => {
    const t = orderFlow({ markerTtlSeconds: ttl });
    const startMs = t.ctx.now().getTime();
    expect((await t.send('pay-1', 'PaymentReceived', payment)).outcome.kind).toBe('parked');
    // Each resubmit within the operators' horizon (ttl less the margin) of the last parking.
    await rejectedAndResubmitted(t, startMs, 0, 200_000);
    await rejectedAndResubmitted(t, startMs, 200_000, 400_000);
    await rejectedAndResubmitted(t, startMs, 400_000, claimLife - 1800);
    // Past the first claim's life, within the item's horizon: a producer's copy of the payment.
    at(t, claimLife + 60, startMs);
    expect((await t.send('pay-1-resent', 'PaymentReceived', payment)).outcome.kind).toBe('duplicate');
    expect((await t.send('m-o1', 'OrderPlaced', orderPlaced('o1'))).outcome.kind).toBe('created');
    expect(await t.order('o1')).toMatchObject({ amountPaid: 5, paymentCount: 1 });
  });
});
