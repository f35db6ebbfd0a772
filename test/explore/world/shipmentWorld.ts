import { metrics } from '@opentelemetry/api';
import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import type { Scheduler } from 'fast-check';
import { planResubmit } from '../../../src/cli/resubmitCopy.js';
import { InMemoryDocumentStore, create, replace } from '../../../src/idempotency/index.js';
import type { DocumentStore, ProcessingOutcome } from '../../../src/idempotency/index.js';
import { newOrderAcceptedOutbox, newOrderDocument } from '../../../src/orders/documents.js';
import { throwUnlessCompletable } from '../../../src/orders/index.js';
import type { OrderDocument, OrderPlaced } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { RetryScheduler } from '../../../src/servicebus/index.js';
import { HttpCarrierClient, parseShipmentEvent, reconcileShipments } from '../../../src/shipments/index.js';
import type { Caller, ReconcileOptions, ReconcileResult, ShipmentContext } from '../../../src/shipments/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import type { LogSink } from '../../../src/telemetry/index.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { shipmentConsumer } from '../../support/shipmentHarness.js';
import { testRetryStateKey } from '../../support/signedRetryState.js';
import { AwaitPoints, never } from './awaitPoints.js';
import type { Actor } from './awaitPoints.js';
import { untilIdle } from './orderWorld.js';
import { CarrierModel } from './carrierModel.js';
import { reconcileShipmentsBeforeB0d3fe1 } from './reconcilerBeforeB0d3fe1.js';
import { ScheduledStore } from './scheduledStore.js';
import type { ShipmentScenario } from './shipmentScenario.js';
import { shipmentTimes } from './shipmentScenario.js';
import { Timeline } from './timeline.js';

export const shipmentWorldStartMs = Date.parse('2026-12-01T10:00:00Z');
/** Deliveries per message before the broker dead-letters it (Service Bus's MaxDeliveryCount). */
export const maxDeliveries = 10;
const maxMessageBytes = 262_144;
/** A pause in the flows (an in-invocation retry) moves the world's clock this much: at least the longest pause asked for. */
const pauseMs = 2_000;
const t = shipmentTimes;

export interface ShipmentWorldOptions {
  /** The defect of issue 24 (fixed in b0d3fe1): the reconciler counts rounds against whatever in-progress record it re-reads. */
  readonly reconcilerBeforeB0d3fe1?: boolean;
}

/** One broker message: the event as the outbox published it, a delayed-retry copy, or an operator's resubmit. */
export interface ShipmentMessageFate {
  /** A short name for the timeline (`o1-event`, `o1-copy2`): copies' MessageIds are HMACs. */
  readonly name: string;
  readonly orderId: string;
  readonly messageId: string;
  readonly subject?: string;
  readonly contentType?: string;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
  readonly body: unknown;
  readonly sequenceNumber: number;
  deliveries: number;
  /** The delivery holding the lock, and since when: only its settlement counts. */
  lockHolder?: string;
  lockTakenAtMs?: number;
  completed?: ProcessingOutcome['kind'];
  deadLettered?: ProcessingOutcome;
}

export interface ShipmentWorldRun {
  readonly memory: InMemoryDocumentStore;
  readonly timeline: Timeline;
  readonly carrier: CarrierModel;
  readonly fates: ReadonlyMap<string, ShipmentMessageFate>;
  /** The event's key per order: the shipment record's identity and the carrier's Idempotency-Key. */
  readonly keys: ReadonlyMap<string, string>;
  /** Actors still running when the world ran out of work: a flow waiting on nothing. */
  readonly stuck: readonly string[];
}

const silent: LogSink = { info: () => undefined, warn: () => undefined, error: () => undefined };
const telemetry = new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('explore')), undefined, 'shipment-message');

/**
 * The shipment booking (requestShipment's ShipmentConsumer) and its reconciler as the host runs them,
 * in a world fast-check controls: every delivery, reconciler run, clock move, payment on the order,
 * store call and carrier call is a scheduler task. The broker redelivers what is not completed
 * (after the lock lapses, for a worker that died) until its limit; a retry becomes a delayed copy,
 * delivered once the clock reaches its time. Runs until nothing is left to do, then lets the
 * reconciler's timer fire, every interval, until no record is in progress or the budget and the
 * carrier's memory are long past.
 */
export async function runShipmentWorld(scenario: ShipmentScenario, s: Scheduler, options: ShipmentWorldOptions = {}): Promise<ShipmentWorldRun> {
  let nowMs = shipmentWorldStartMs;
  const timeline = new Timeline(() => nowMs, shipmentWorldStartMs);
  const memory = new InMemoryDocumentStore(() => nowMs);
  const points = new AwaitPoints(s, timeline);
  const store = new ScheduledStore(memory, points, { fates: scenario.storeFates });
  const carrier = new CarrierModel(points, () => nowMs, { fates: scenario.carrierFates, keyRetentionMs: t.carrierKeyRetentionSeconds * 1000 });
  const now = () => new Date(nowMs);
  const advanceTo = (ms: number, why: string): void => {
    if (ms <= nowMs) return;
    const by = ms - nowMs;
    nowMs = ms;
    timeline.add('clock', `+${by / 1000} s (${why})`);
    carrier.clockMoved(by);
  };

  const fates = new Map<string, ShipmentMessageFate>();
  const keys = new Map<string, string>();
  const running = new Set<string>();
  let actorsStarted = 0;
  let copies = 0;
  const crashFor = (index: number) => scenario.crashes.find((c) => c.delivery === index);

  const storeFor = (actor: Actor): DocumentStore => store.forActor(actor);
  const ctxFor = (actor: Actor): ShipmentContext => ({
    store: storeFor(actor),
    carrier: new HttpCarrierClient({ baseUrl: 'http://127.0.0.1:7080/', timeoutMs: 10_000, now, fetch: carrier.fetchFor(actor) }),
    now,
    leaseMs: t.leaseSeconds * 1000,
    maxConcurrencyAttempts: 5,
  });
  const sleeperFor = (actor: Actor) => async (): Promise<void> => {
    const step = await points.pass(actor, 'pause (in-invocation retry)');
    if (step.dies) {
      points.die(actor, 'pause');
      return never();
    }
    advanceTo(nowMs + pauseMs, `${actor.name} pauses`);
  };
  const retrySchedulerFor = (actor: Actor, orderId: string): RetryScheduler => ({
    schedule: async (copy, enqueueAt) => {
      const label = `send delayed copy for ${enqueueAt.toISOString().slice(11, 19)}`;
      const step = await points.pass(actor, label);
      if (step.dies) {
        points.die(actor, label);
        return never();
      }
      if (fates.has(copy.messageId)) {
        timeline.add(actor.name, `${label}: the broker's duplicate detection drops it (that copy was sent before)`);
        return;
      }
      copies += 1;
      const fate = addMessage(`${orderId}-copy${copies}`, orderId, { ...copy, body: JSON.parse(String(copy.body)) as unknown });
      timeline.add(actor.name, `${label}: ${fate.name}`);
      timeline.count('delayed copy sent');
      deliver(fate, 'delayed copy due', enqueueAt.getTime());
    },
    close: async () => undefined,
  });

  let sequence = 0;
  const addMessage = (
    name: string,
    orderId: string,
    m: { messageId: string; subject?: string; contentType?: string; applicationProperties: Readonly<Record<string, string | number | boolean>>; body: unknown },
  ): ShipmentMessageFate => {
    sequence += 1;
    const fate: ShipmentMessageFate = {
      name,
      orderId,
      messageId: m.messageId,
      subject: m.subject,
      contentType: m.contentType,
      applicationProperties: m.applicationProperties,
      body: m.body,
      sequenceNumber: sequence,
      deliveries: 0,
    };
    fates.set(m.messageId, fate);
    return fate;
  };
  const envelopeOf = (fate: ShipmentMessageFate) =>
    envelopeFromTriggerMetadata({
      messageId: fate.messageId,
      subject: fate.subject,
      contentType: fate.contentType,
      deliveryCount: fate.deliveries,
      sequenceNumber: fate.sequenceNumber,
      applicationProperties: fate.applicationProperties,
    });

  const deliver = (fate: ShipmentMessageFate, why: string, dueMs?: number): void => {
    void s.schedule(Promise.resolve(), `broker: deliver ${fate.name} (${why})`).then(() => {
      if (dueMs !== undefined) advanceTo(dueMs, `${fate.name}: ${why}`);
      return runDelivery(fate);
    });
  };

  const settle = (fate: ShipmentMessageFate, name: string, outcome: ProcessingOutcome, diedAtMs?: number): void => {
    running.delete(name);
    if (fate.lockHolder !== name) {
      timeline.add(name, `settles ${outcome.kind}, but its lock was lost to ${fate.lockHolder ?? 'nobody'}: the broker ignores it`);
      timeline.count('settled after its lock was lost');
      return;
    }
    try {
      throwUnlessCompletable(outcome);
      fate.completed = outcome.kind;
      return;
    } catch {
      // abandoned: redelivered, or dead-lettered at the limit
    }
    if (fate.deliveries >= maxDeliveries) {
      fate.deadLettered = outcome;
      timeline.count('dead-lettered');
      timeline.add('broker', `DEAD-LETTERED ${fate.name} after ${fate.deliveries} deliveries (last: ${outcome.kind})`);
      return;
    }
    deliver(fate, `redelivery after ${outcome.kind}`, diedAtMs === undefined ? undefined : diedAtMs + t.lockSeconds * 1000);
  };

  const runDelivery = async (fate: ShipmentMessageFate): Promise<void> => {
    if (fate.deadLettered) return;
    fate.deliveries += 1;
    const index = actorsStarted;
    actorsStarted += 1;
    const name = `${fate.name}#${fate.deliveries}`;
    fate.lockHolder = name;
    fate.lockTakenAtMs = nowMs;
    fate.completed = undefined;
    const crash = crashFor(index);
    let died = false;
    const actor: Actor = {
      name,
      awaits: 0,
      ...(crash ? { crashAt: { atAwait: crash.atAwait, afterApplying: crash.afterApplying } } : {}),
      onCrash: () => {
        died = true;
        settle(fate, name, { kind: 'retry', reason: 'the worker died; its lock lapses' }, nowMs);
      },
    };
    running.add(name);
    timeline.add(name, `starts (deliveryCount ${fate.deliveries})`);
    const consumer = shipmentConsumer(ctxFor(actor), {
      retry: {
        inInvocationMs: t.inInvocationMs,
        firstDelayMs: t.firstDelaySeconds * 1000,
        maxDelayMs: t.maxDelaySeconds * 1000,
        budgetMs: t.transientBudgetSeconds * 1000,
      },
      scheduler: retrySchedulerFor(actor, fate.orderId),
      retryStateKey: testRetryStateKey,
      sleep: sleeperFor(actor),
      telemetry,
    });
    let outcome: ProcessingOutcome;
    try {
      outcome = (await consumer.consume(envelopeOf(fate), structuredClone(fate.body), silent, { invocationId: name })).outcome;
    } catch (error) {
      outcome = { kind: 'retry', reason: `threw ${error instanceof Error ? error.message : String(error)}`, cause: error };
    }
    if (died) return;
    timeline.add(name, `ends: ${describeOutcome(outcome)}`);
    timeline.count(`outcome ${outcome.kind}`);
    settle(fate, name, outcome);
  };

  const reconcileOptions: ReconcileOptions = { maxAttempts: t.reconcileMaxAttempts, transientBudgetMs: t.transientBudgetSeconds * 1000, batchSize: 50 };
  const reconcile = options.reconcilerBeforeB0d3fe1 ? reconcileShipmentsBeforeB0d3fe1 : reconcileShipments;
  const runReconciler = async (label: string, crashable: boolean): Promise<void> => {
    const index = crashable ? actorsStarted : -1;
    if (crashable) actorsStarted += 1;
    const crash = crashFor(index);
    let died = false;
    const actor: Actor = {
      name: label,
      awaits: 0,
      ...(crash ? { crashAt: { atAwait: crash.atAwait, afterApplying: crash.afterApplying } } : {}),
      onCrash: () => {
        died = true;
        running.delete(label);
      },
    };
    running.add(label);
    const caller: Caller = { owner: `reconciler/${label}` };
    let result: ReconcileResult;
    try {
      result = await reconcile(ctxFor(actor), reconcileOptions, caller);
    } catch (error) {
      if (died) return;
      running.delete(label);
      // The timer fires again; a failed run leaves each record as it was or as its etag-guarded writes left it.
      timeline.add(label, `failed: ${error instanceof Error ? error.message : String(error)}`);
      timeline.count('reconciler run failed');
      return;
    }
    if (died) return;
    running.delete(label);
    for (const item of result.items) timeline.count(`reconciled ${item.result}`);
    timeline.add(
      label,
      `ends: examined ${result.examined}: ${result.items.map((i) => `${i.orderId} ${i.result}${i.reason ? ` (${i.reason.slice(0, 80)})` : ''}`).join(', ') || 'nothing'}`,
    );
  };

  const payment = async (orderId: string, label: string): Promise<void> => {
    const actor: Actor = { name: label, awaits: 0 };
    const orders = store.forActor(actor);
    running.add(label);
    try {
      for (let round = 0; round < 5; round += 1) {
        const stored = await orders.read<OrderDocument>(orderId, orderId);
        if (!stored) return;
        const paid: OrderDocument = { ...stored.document, amountPaid: stored.document.amountPaid + 1, paymentCount: stored.document.paymentCount + 1 };
        if ((await orders.commit(orderId, [replace(paid, stored.etag)])).kind === 'committed') return;
      }
    } catch (error) {
      timeline.add(label, `failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      running.delete(label);
    }
  };

  // The orders, stored as processOrder stores them, and the events their outbox publishes.
  const events = new Map<string, ShipmentMessageFate>();
  for (const orderId of scenario.orderIds) {
    const order = newOrderDocument(orderPlaced(orderId) as OrderPlaced, {
      messageId: `${orderId}-placed`,
      dedupKey: `place-${orderId}`,
      fingerprint: 'explore',
      processedAt: now().toISOString(),
    });
    await memory.commit(orderId, [create(order)]);
    const { message } = newOrderAcceptedOutbox(order, 'order-events');
    const fate = addMessage(`${orderId}-event`, orderId, message);
    events.set(orderId, fate);
    keys.set(orderId, parseShipmentEvent({ ...envelopeOf(fate), deliveryCount: 1 }, fate.body, maxMessageBytes).key);
  }

  for (const fate of events.values()) deliver(fate, 'first delivery');
  for (const i of scenario.lockLost) {
    const fate = events.get(scenario.orderIds[i]!)!;
    void s.schedule(Promise.resolve(), `broker: ${fate.name}'s lock lapses while its delivery runs`).then(() => {
      // The host renews the lock for LOCK_RENEWAL_MAX_SECONDS; past that and one lock duration, the message comes back.
      if (fate.lockTakenAtMs !== undefined) advanceTo(fate.lockTakenAtMs + (t.lockRenewalSeconds + t.lockSeconds) * 1000, `${fate.name}'s lock lapses`);
      timeline.count('lock lost, delivered beside the first');
      return runDelivery(fate);
    });
  }
  for (const i of scenario.resubmits) {
    const original = events.get(scenario.orderIds[i]!)!;
    void s.schedule(Promise.resolve(), `operator: resubmit ${original.name}`).then(() => {
      const received = {
        messageId: original.messageId,
        body: original.body,
        subject: original.subject,
        contentType: original.contentType,
        applicationProperties: original.applicationProperties,
        sequenceNumber: original.sequenceNumber,
        enqueuedTimeUtc: new Date(shipmentWorldStartMs),
      };
      const { copy } = planResubmit(received as unknown as ServiceBusReceivedMessage, {
        entityPath: 'order-events/Subscriptions/fulfilment',
        to: 'fulfilment',
        duplicateDetectionWindowMs: 600_000,
        dedupKey: keys.get(original.orderId),
        // Fixed: a seed replays the same run.
        nonce: 'explore',
      });
      const fate = addMessage(`${original.orderId}-resubmit`, original.orderId, {
        ...copy,
        messageId: String(copy.messageId),
        applicationProperties: copy.applicationProperties as Record<string, string | number | boolean>,
      });
      timeline.add('operator', `resubmits ${original.name} as ${fate.name}`);
      timeline.count('operator resubmit');
      return runDelivery(fate);
    });
  }
  scenario.orderChanges.forEach(
    (i, n) => void s.schedule(Promise.resolve(), `payment ${n} on ${scenario.orderIds[i]}`).then(() => payment(scenario.orderIds[i]!, `payment#${n}`)),
  );
  scenario.ticks.forEach(
    (seconds, i) => void s.schedule(Promise.resolve(), `clock: +${seconds} s (tick ${i})`).then(() => advanceTo(nowMs + seconds * 1000, `tick ${i}`)),
  );
  for (let i = 0; i < scenario.reconciles; i += 1) {
    void s.schedule(Promise.resolve(), `timer: reconcile ${i}`).then(() => {
      advanceTo(shipmentWorldStartMs + (i + 1) * t.reconcileEverySeconds * 1000, `the reconciler's timer`);
      return runReconciler(`reconciler#${i}`, true);
    });
  }

  await untilIdle(s);
  const stuck = [...running];
  // The backstop: the timer keeps firing, one interval apart, until nothing is left in progress.
  const maxRounds = Math.ceil((t.transientBudgetSeconds + t.carrierKeyRetentionSeconds) / t.reconcileEverySeconds) + 5;
  for (let round = 0; round < maxRounds && inProgress(memory, scenario).length > 0; round += 1) {
    advanceTo(nowMs + t.reconcileEverySeconds * 1000, "the reconciler's timer (backstop)");
    const done = runReconciler(`reconciler#backstop${round}`, false);
    await untilIdle(s);
    await done;
  }
  return { memory, timeline, carrier, fates, keys, stuck: [...new Set([...stuck, ...running])] };
}

/** Shipment records still in progress. */
export function inProgress(memory: InMemoryDocumentStore, scenario: ShipmentScenario): string[] {
  return scenario.orderIds.flatMap((orderId) =>
    memory
      .list(orderId)
      .filter((d) => (d as { docType?: string; state?: string }).docType === 'shipment' && (d as { state?: string }).state === 'in-progress')
      .map((d) => d.id),
  );
}

function describeOutcome(outcome: ProcessingOutcome): string {
  switch (outcome.kind) {
    case 'conflict':
    case 'invalid':
      return `${outcome.kind} ${outcome.error.code}`;
    case 'retry':
      return `retry (${outcome.reason.slice(0, 160)})`;
    case 'rescheduled':
      return `rescheduled (a delayed copy, attempt ${outcome.attempt})`;
    default:
      return outcome.kind;
  }
}
