import { metrics } from '@opentelemetry/api';
import type { Scheduler } from 'fast-check';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import type { ProcessingOutcome } from '../../../src/idempotency/index.js';
import { OrderConsumer, idempotencyKeyProperty, sweepParkedItems } from '../../../src/orders/index.js';
import type { OrderConsumerOptions } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import type { LogSink } from '../../../src/telemetry/index.js';
import { AwaitPoints } from './awaitPoints.js';
import { claimMoves, claimOf, fillOrder, operatorResubmit, snapshot, voidClaim } from './claimWorld.js';
import type { Actor } from './awaitPoints.js';
import type { ModelMessage, OrderScenario } from './orderScenario.js';
import { parkingHorizonSeconds, sweepMinAgeSeconds, worldNameOf } from './orderScenario.js';
import { ScheduledStore } from './scheduledStore.js';
import { Timeline } from './timeline.js';

export const worldStartMs = Date.parse('2026-11-30T12:00:00Z');
/** Deliveries per message before the broker dead-letters it (Service Bus's MaxDeliveryCount). */
export const maxDeliveries = 10;
const markerTtlSeconds = 3600;

export interface WorldOptions {
  /** The defect of 24649c0: the order lists its parked items beside its gate read, as before 43efa77. */
  readonly listBesideGateRead?: boolean;
  /** The payment-claims scenario (world/claimScenario.ts): one paymentId under several keys, orders, amounts and currencies. */
  readonly paymentClaims?: boolean;
  /** The claim-rounds scenario (world/claimScenario.ts claimRoundsScenarioArb): parked payments rejected and resubmitted past their first claim's life. */
  readonly claimRounds?: boolean;
  /** The rule before f8e92a7: a payment parked again under a claim written before does not write it again (its renewal is dropped). */
  readonly claimWrittenOnce?: boolean;
}

/** How a broker message ended: completed by some delivery, or dead-lettered after its last one. */
export interface MessageFate {
  readonly message: ModelMessage;
  deliveries: number;
  /** The delivery that holds the message's lock: the only one whose complete or abandon the broker takes. */
  lockHolder?: string;
  completed?: ProcessingOutcome['kind'];
  deadLettered?: ProcessingOutcome;
}

export interface WorldRun {
  readonly memory: InMemoryDocumentStore;
  readonly timeline: Timeline;
  readonly fates: ReadonlyMap<string, MessageFate>;
  /** Actors still running when the world ran out of work: a flow waiting on nothing. */
  readonly stuck: readonly string[];
  readonly nowMs: () => number;
  /** What other payments added to each order's amountPaid (scenario `roomLeft`). */
  readonly filled: ReadonlyMap<string, number>;
  /** Deliveries that ended in a conflict with a claim void all along (the world's oracle, see voidClaim). */
  readonly misjudgedClaims: readonly string[];
}

const silent: LogSink = { info: () => undefined, warn: () => undefined, error: () => undefined };
const telemetry = new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('explore')));

/** Outcomes the host completes the message on (src/consumer/settlement.ts); the rest throw: redelivered. */
const completes = new Set<ProcessingOutcome['kind']>(['created', 'parked', 'duplicate', 'stale', 'rescheduled']);

/**
 * The order flows as the host runs them, in a world fast-check controls: every message's
 * deliveries, the sweeper's runs, the clock's moves and each store call are scheduler tasks; a
 * delivery whose outcome is not completable comes back with deliveryCount + 1 until the broker's
 * limit, and one whose worker died comes back the same way (its lock expired).
 * Runs until nothing is left to do, then lets the backstop sweep run past the parking horizon.
 */
export async function runOrderWorld(
  scenario: OrderScenario,
  s: Scheduler,
  options: WorldOptions,
  checkBeforeBackstop: (run: WorldRun) => string[],
): Promise<{ run: WorldRun; early: string[] }> {
  let nowMs = worldStartMs;
  const timeline = new Timeline(() => nowMs, worldStartMs);
  const memory = new InMemoryDocumentStore(() => nowMs);
  const points = new AwaitPoints(s, timeline);
  const store = new ScheduledStore(memory, points, {
    fates: scenario.fates,
    listBesideGateRead: options.listBesideGateRead,
    claimWrittenOnce: options.claimWrittenOnce,
  });
  // One flow context per actor, as each invocation is its own caller: its store calls and pauses are its await points.
  const contextFor = (actor: Actor) => ({
    store: store.forActor(actor),
    now: () => new Date(nowMs),
    markerTtlSeconds,
    maxConcurrencyAttempts: 5,
    orderEventsDestination: 'order-events',
    sleep: points.sleeperFor(actor),
    random: () => 0.5,
  });
  const consumerFor = (actor: Actor) => new OrderConsumer({ ...contextFor(actor), maxMessageBytes: 262_144, telemetry } satisfies OrderConsumerOptions);
  const fates = new Map<string, MessageFate>(scenario.messages.map((m) => [worldNameOf(m), { message: m, deliveries: 0 }]));
  const filled = new Map<string, number>();
  const misjudgedClaims: string[] = [];
  const running = new Set<string>();
  let deliveriesStarted = 0;
  let sequence = 0;
  const sequenceOf = new Map(scenario.messages.map((m) => [worldNameOf(m), (sequence += 1)]));

  // Deliveries not ended yet: with `sweepAfterEachTick` the clock waits for them (the scenario has no crash that would never end one).
  const inFlight = new Set<Promise<void>>();
  const deliver = (fate: MessageFate, why: string): void => {
    const delivery = s.schedule(Promise.resolve(), `broker: deliver ${worldNameOf(fate.message)} (${why})`).then(() => runDelivery(fate));
    inFlight.add(delivery);
    void delivery.finally(() => inFlight.delete(delivery));
  };

  let deliveriesEnded = 0;
  const settle = (fate: MessageFate, name: string, outcome: ProcessingOutcome): void => {
    running.delete(name);
    deliveriesEnded += 1;
    if (deliveriesEnded === scenario.armTimersAfter) armTimers();
    if (fate.lockHolder !== name) {
      // Its lock expired and another delivery took the message: this complete or abandon fails (lock lost).
      timeline.add(name, `settles ${outcome.kind}, but its lock was lost to ${fate.lockHolder ?? 'nobody'}: the broker ignores it`);
      timeline.count('settled after its lock was lost');
      return;
    }
    if (completes.has(outcome.kind)) {
      fate.completed = outcome.kind;
      return;
    }
    if (fate.deliveries >= maxDeliveries) {
      fate.deadLettered = outcome;
      timeline.count('dead-lettered');
      timeline.add('broker', `DEAD-LETTERED ${worldNameOf(fate.message)} after ${fate.deliveries} deliveries (last: ${outcome.kind})`);
      return;
    }
    deliver(fate, `redelivery after ${outcome.kind}`);
  };

  const runDelivery = async (fate: MessageFate): Promise<void> => {
    if (fate.deadLettered) return; // the broker has moved it to the dead-letter queue: nothing left to hand out
    fate.deliveries += 1;
    const index = deliveriesStarted;
    deliveriesStarted += 1;
    const m = fate.message;
    const name = `${worldNameOf(m)}#${fate.deliveries}`;
    // A delivery after the message was completed stands for a completion that never reached the broker.
    fate.lockHolder = name;
    fate.completed = undefined;
    const crash = scenario.crashes.find((c) => c.delivery === index);
    let died = false;
    const actor: Actor = {
      name,
      messageType: m.type,
      awaits: 0,
      ...(crash ? { crashAt: { atAwait: crash.atAwait, afterApplying: crash.afterApplying } } : {}),
      onCrash: () => {
        died = true;
        settle(fate, name, { kind: 'retry', reason: 'the worker died; its lock expired' });
      },
    };
    running.add(name);
    timeline.add(name, `starts (deliveryCount ${fate.deliveries})`);
    if (m.worldName !== undefined) timeline.count('delivered under a reused MessageId');
    const envelope = envelopeFromTriggerMetadata({
      messageId: m.messageId,
      subject: m.type,
      deliveryCount: fate.deliveries,
      sequenceNumber: sequenceOf.get(worldNameOf(m)),
      applicationProperties: { [idempotencyKeyProperty]: m.key },
    });
    const paymentId = m.type === 'PaymentReceived' ? String(m.body.paymentId) : undefined;
    const voidAtStart = paymentId === undefined ? undefined : snapshot(voidClaim(memory, paymentId));
    const claimAtStart = paymentId === undefined ? undefined : snapshot(claimOf(memory, paymentId));
    let outcome: ProcessingOutcome;
    try {
      outcome = (await consumerFor(actor).consume(envelope, structuredClone(m.body), silent)).outcome;
    } catch (error) {
      outcome = { kind: 'retry', reason: `threw ${error instanceof Error ? error.message : String(error)}`, cause: error };
    }
    if (died) return;
    timeline.add(name, `ends: ${describeOutcome(outcome)}`);
    if (outcome.kind === 'conflict' && voidAtStart !== undefined && voidAtStart === snapshot(voidClaim(memory, paymentId!))) {
      misjudgedClaims.push(`${name} ended in a conflict with ${paymentId}'s claim, void since before it started and unchanged: ${voidAtStart}`);
    }
    timeline.count(`outcome ${outcome.kind}`);
    for (const move of claimMoves(memory, m, claimAtStart, outcome)) timeline.count(move);
    if (outcome.kind === 'created' && (outcome.appliedParked ?? 0) > 0) timeline.count('parked items applied with their order');
    settle(fate, name, outcome);
  };

  // The operator answers the alert on rejected parked items, as many times as the scenario says (not
  // after the backstop sweep: a copy parked afresh then would wait for a sweep that never comes).
  let resubmitsLeft = scenario.operatorResubmits ?? 0;
  const alertOperator = (): void => {
    if (resubmitsLeft <= 0) return;
    resubmitsLeft -= 1;
    const label = `operator#${resubmitsLeft}`;
    void s.schedule(Promise.resolve(), `operator: parked resubmit after the alert (${label})`).then(() => operatorRun(label));
  };
  const operatorRun = async (label: string): Promise<void> => {
    {
      const actor: Actor = { name: label, awaits: 0 };
      running.add(label);
      try {
        const sent = await operatorResubmit(actor, store.forActor(actor), points, () => nowMs, enqueue);
        timeline.add(label, `parked resubmit --all --reason OrderNeverArrived: ${sent} resubmitted`);
        if (sent > 0) timeline.count('operator resubmitted a parked item');
      } catch (error) {
        timeline.add(label, `failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        running.delete(label);
      }
    }
  };

  const sweep = async (label: string, backstop = false): Promise<boolean> => {
    const actor: Actor = { name: label, awaits: 0 };
    running.add(label);
    try {
      const result = await sweepParkedItems(contextFor(actor), {
        horizonSeconds: parkingHorizonSeconds,
        minAgeSeconds: sweepMinAgeSeconds,
        maxItemsPerRun: 1000,
      });
      if (result.rejected.length > 0) timeline.count('sweeper rejected parked items');
      if (result.rejected.length > 0 && !backstop) alertOperator();
      if (result.applied > 0) timeline.count('sweeper applied parked items');
      timeline.add(
        label,
        `ends: examined ${result.examined}, applied ${result.applied}, rejected ${result.rejected.map((r) => `${r.id} (${r.reason})`).join(', ') || 'none'}`,
      );
      return true;
    } catch (error) {
      // The timer fires again; a failed run leaves every item as it was or as its etag-guarded writes left it.
      timeline.add(label, `failed: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    } finally {
      running.delete(label);
    }
  };

  for (const fate of fates.values()) deliver(fate, 'first delivery');
  for (const i of scenario.lockLost) deliver(fates.get(worldNameOf(scenario.messages[i]!))!, 'lock lost: delivered again while the first may still run');
  // One tick after another, each followed by the sweeper's timer (until a run gets through) and the
  // operator answering its alert at once: the next move of the clock waits for both, and for the
  // copies they sent to be delivered (the sweeper's five minutes, not the tick's hour, are what a
  // parked item waits for its next sweep).
  const tickFrom = (i: number): void => {
    const seconds = scenario.ticks[i];
    if (seconds === undefined) return;
    void s.schedule(Promise.resolve(), `clock: +${seconds} s (tick ${i}), then the sweeper and the operator`).then(async () => {
      nowMs += seconds * 1000;
      timeline.add('clock', `+${seconds} s`);
      for (let run = 0; run <= scenario.fates.length; run += 1) if (await sweep(`sweeper#tick${i}.${run}`, true)) break;
      if (resubmitsLeft > 0) {
        resubmitsLeft -= 1;
        await operatorRun(`operator#tick${i}`);
      }
      while (inFlight.size > 0) await Promise.all(inFlight);
      tickFrom(i + 1);
    });
  };
  let timersArmed = false;
  const armTimers = (): void => {
    if (timersArmed) return;
    timersArmed = true;
    if (scenario.sweepAfterEachTick) tickFrom(0);
    else
      scenario.ticks.forEach(
        (seconds, i) =>
          void s.schedule(Promise.resolve(), `clock: +${seconds} s (tick ${i})`).then(() => {
            nowMs += seconds * 1000;
            timeline.add('clock', `+${seconds} s`);
          }),
      );
    for (let i = 0; i < scenario.sweeps; i += 1) void s.schedule(Promise.resolve(), `timer: sweep ${i}`).then(() => sweep(`sweeper#${i}`));
  };
  if (scenario.armTimersAfter === undefined) armTimers();
  // Other payments come once the order is stored: until it is, the fill waits for its next turn (a few at most).
  const fill = (orderId: string, roomLeft: number, turnsLeft: number): void =>
    void s.schedule(Promise.resolve(), `other payments of ${orderId}`).then(async () => {
      const added = await fillOrder(memory, orderId, roomLeft);
      if (added > 0) {
        filled.set(orderId, (filled.get(orderId) ?? 0) + added);
        timeline.add('other payments', `${orderId}'s amountPaid +${added}: ${roomLeft} below the exact-sum bound`);
        timeline.count('order filled to the exact-sum bound');
      } else if (turnsLeft > 0) fill(orderId, roomLeft, turnsLeft - 1);
    });
  for (const [orderId, roomLeft] of Object.entries(scenario.roomLeft ?? {})) fill(orderId, roomLeft, 6);
  const enqueue = (message: ModelMessage): void => {
    const fate: MessageFate = { message, deliveries: 0 };
    fates.set(worldNameOf(message), fate);
    sequenceOf.set(worldNameOf(message), (sequence += 1));
    deliver(fate, 'resubmitted by the operator');
  };
  await untilIdle(s);
  if (!timersArmed) {
    armTimers();
    await untilIdle(s);
  }
  const run: WorldRun = { memory, timeline, fates, stuck: [...running], nowMs: () => nowMs, filled, misjudgedClaims };
  const early = checkBeforeBackstop(run);
  nowMs += (parkingHorizonSeconds + 1) * 1000;
  timeline.add('clock', `+${parkingHorizonSeconds + 1} s: past the parking horizon; the backstop sweep runs`);
  // The timer fires until a run gets through (a run can meet a refused write like anyone else).
  for (let i = 0; i <= scenario.fates.length; i += 1) {
    const done = sweep(`sweeper#backstop${i}`, true);
    await untilIdle(s);
    if (await done) break;
  }
  return { run: { ...run, stuck: [...running] }, early };
}

/** Until the scheduler has nothing left, including tasks that are scheduled a few promise hops after a release. */
export async function untilIdle(s: Scheduler): Promise<void> {
  for (;;) {
    await s.waitIdle();
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (s.count() === 0) return;
  }
}

function describeOutcome(outcome: ProcessingOutcome): string {
  switch (outcome.kind) {
    case 'conflict':
    case 'invalid':
      return `${outcome.kind} ${outcome.error.code}`;
    case 'retry':
      return `retry (${outcome.reason})`;
    case 'created':
      return outcome.appliedParked === undefined
        ? 'created'
        : `created with ${outcome.appliedParked} parked applied${outcome.rejectedParked?.length ? `, ${outcome.rejectedParked.length} rejected` : ''}`;
    default:
      return outcome.kind;
  }
}
