import { metrics } from '@opentelemetry/api';
import type { Scheduler } from 'fast-check';
import { loadSettings } from '../../../src/config.js';
import type { Settings } from '../../../src/config.js';
import { InMemoryDocumentStore, create, replace } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import { newOrderAcceptedOutbox, newOrderDocument, outboxDocumentId } from '../../../src/orders/documents.js';
import { createOutboxPublisher } from '../../../src/outbox/index.js';
import type { EventSender, OutboxDocument } from '../../../src/outbox/index.js';
import type { LogSink } from '../../../src/telemetry/index.js';
import { AwaitPoints } from './awaitPoints.js';
import type { Actor } from './awaitPoints.js';
import { BrokerModel } from './outboxBroker.js';
import type { OutboxScenario } from './outboxScenario.js';
import { outboxSweepMinAgeSeconds } from './outboxScenario.js';
import { untilIdle, worldStartMs } from './orderWorld.js';
import { ReadFates, withReadFates } from './readFates.js';
import { ScheduledStore } from './scheduledStore.js';
import { Timeline } from './timeline.js';

export const orderEventsTopic = 'order-events';

export interface OutboxWorldOptions {
  /**
   * The defect the publisher's order of steps prevents (src/outbox/publishOutbox.ts: "marked
   * before, a crash would lose the event"): each entry is marked published before it is sent, so
   * a send that fails, or a worker that dies between the two, leaves it published and never sent.
   */
  readonly markBeforeSend?: boolean;
}

export interface OutboxRun {
  readonly memory: InMemoryDocumentStore;
  readonly broker: BrokerModel;
  readonly timeline: Timeline;
  readonly stuck: readonly string[];
}

const silent: LogSink = { info: () => undefined, warn: () => undefined, error: () => undefined };
const meter = metrics.getMeter('explore');
const baseSettings: Settings = loadSettings({
  ServiceBusConnection: 'Endpoint=sb://127.0.0.1/;SharedAccessKeyName=k;SharedAccessKey=k',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
  OUTBOX_SWEEP_MIN_AGE_SECONDS: String(outboxSweepMinAgeSeconds),
  RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
});

/** The order's OrderAccepted entry as the order flow writes it (its document and batch). */
function orderAcceptedEntry(orderId: string, createdAtMs: number): OutboxDocument {
  const order = newOrderDocument(
    { orderId, customerId: 'c1', currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: 10 }], placedAt: '2026-11-30T08:00:00Z' },
    { messageId: `${orderId}-placed`, dedupKey: `place-${orderId}`, fingerprint: `fp-${orderId}`, processedAt: new Date(createdAtMs).toISOString() },
  );
  return newOrderAcceptedOutbox(order, orderEventsTopic);
}

/**
 * The outbox publisher as the host runs it, in a world fast-check controls: the change feed hands
 * out batches of the orders' entries (as it reads them: their latest version and etag), the
 * trigger retries a batch whose delivery threw (the same documents) and then moves on, a lost
 * lease gives the batch to a second instance while the first still runs, a dead instance's batch
 * is read again after its lease expires, and the sweeper's timer fires. Every store call and send
 * is a scheduler task with its fate. Runs to idle, then moves the clock past the sweeper's minimum
 * age and lets the timer fire until a sweep finds nothing pending.
 */
export async function runOutboxWorld(scenario: OutboxScenario, s: Scheduler, options: OutboxWorldOptions = {}): Promise<OutboxRun> {
  let nowMs = worldStartMs;
  const timeline = new Timeline(() => nowMs, worldStartMs);
  const memory = new InMemoryDocumentStore(() => nowMs);
  const points = new AwaitPoints(s, timeline);
  const store = new ScheduledStore(memory, points, { fates: scenario.storeFates });
  const readFates = new ReadFates(scenario.readFates);
  const broker = new BrokerModel(points, scenario.sendFates, () => nowMs);
  const settings: Settings = { ...baseSettings, outbox: { ...baseSettings.outbox, sweepMaxItemsPerRun: scenario.maxItemsPerRun } };
  const now = () => new Date(nowMs);
  const running = new Set<string>();
  let actorsStarted = 0;

  for (const orderId of scenario.orderIds) await memory.commit(orderId, [create(orderAcceptedEntry(orderId, nowMs))]);

  /** An actor with its crash point, if the scenario gives it one; `onCrash` says what the world does about it. */
  const actorFor = (name: string, onCrash: () => void): Actor => {
    const crash = scenario.crashes.find((c) => c.actor === actorsStarted);
    actorsStarted += 1;
    running.add(name);
    return {
      name,
      awaits: 0,
      ...(crash ? { crashAt: { atAwait: crash.atAwait, afterApplying: crash.afterApplying } } : {}),
      onCrash: () => {
        running.delete(name);
        onCrash();
      },
    };
  };
  const publisherFor = (actor: Actor) => {
    const actorStore = withReadFates(store.forActor(actor), actor, points, readFates);
    const toBroker = broker.senderFor(actor);
    const sender = options.markBeforeSend ? markingFirst(toBroker, actorStore, points, actor, now) : toBroker;
    return createOutboxPublisher(settings, { store: actorStore, sender, now, meter });
  };

  /** What the change feed reads for a batch: the latest version of each entry, with its etag. */
  const readBatch = async (batch: number): Promise<Record<string, unknown>[]> =>
    Promise.all(
      scenario.batches[batch]!.map(async (i) => {
        const orderId = scenario.orderIds[i]!;
        const found = (await memory.read<OutboxDocument>(orderId, outboxDocumentId(orderId)))!;
        return { ...found.document, _etag: found.etag, _lsn: 1 };
      }),
    );

  let instances = 0;
  const deliverBatch = (batch: number, why: string): void => {
    void s.schedule(Promise.resolve(), `change feed: batch ${batch} (${why})`).then(async () => runBatch(batch, await readBatch(batch), why, 0));
  };

  const runBatch = async (batch: number, documents: Record<string, unknown>[], why: string, retry: number): Promise<void> => {
    instances += 1;
    const name = `feed#b${batch}.${instances}`;
    let died = false;
    const actor = actorFor(name, () => {
      died = true;
      // The instance's lease expires unrenewed, with no checkpoint past the batch: another instance reads it again.
      deliverBatch(batch, `read again after ${name} died`);
    });
    timeline.add(
      name,
      `starts on batch ${batch} (${why}${retry > 0 ? `, retry ${retry}` : ''}): ${documents.map((d) => `${String(d.orderId)}(${String(d.state)}) etag ${String(d._etag)}`).join(', ')}`,
    );
    try {
      const result = await publisherFor(actor).publishChanges(documents, silent);
      timeline.add(name, `ends: published ${result.published.length}, failed ${result.failed.length}, already handled ${result.alreadyHandled}`);
      running.delete(name);
    } catch (error) {
      if (died) return;
      running.delete(name);
      timeline.add(name, `threw: ${error instanceof Error ? error.message : String(error)}`);
      if (retry < scenario.batchRetries) {
        timeline.count('batch retried');
        void s.schedule(Promise.resolve(), `trigger: retry batch ${batch}`).then(() => runBatch(batch, documents, why, retry + 1));
      } else {
        timeline.count('batch given up to the sweeper');
        timeline.add(name, 'retries spent: the feed checkpoints past the batch');
      }
    }
  };

  const sweep = async (name: string, mayCrash: boolean): Promise<number | undefined> => {
    const actor: Actor = mayCrash ? actorFor(name, () => undefined) : (running.add(name), { name, awaits: 0 });
    try {
      const result = await publisherFor(actor).sweep(silent);
      timeline.add(name, `ends: ${result.pending} pending, published ${result.published.published.length}, failed ${result.published.failed.length}`);
      if (result.published.published.length > 0) timeline.count('sweeper published');
      return result.pending;
    } catch (error) {
      timeline.add(name, `failed: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    } finally {
      running.delete(name);
    }
  };

  scenario.batches.forEach((_, b) => deliverBatch(b, 'first delivery'));
  for (const b of scenario.lostLeases) {
    timeline.count('lease lost: batch held twice');
    deliverBatch(b, 'lease lost: another instance holds the batch');
  }
  scenario.ticks.forEach(
    (seconds, i) =>
      void s.schedule(Promise.resolve(), `clock: +${seconds} s (tick ${i})`).then(() => {
        nowMs += seconds * 1000;
        timeline.add('clock', `+${seconds} s`);
      }),
  );
  for (let i = 0; i < scenario.sweeps; i += 1) void s.schedule(Promise.resolve(), `timer: outbox sweep ${i}`).then(() => sweep(`sweeper#${i}`, true));

  await untilIdle(s);
  nowMs += (outboxSweepMinAgeSeconds + 1) * 1000;
  timeline.add('clock', `+${outboxSweepMinAgeSeconds + 1} s: past the sweeper's minimum age; the timer fires until nothing is pending`);
  const rounds = scenario.orderIds.length + scenario.storeFates.length + scenario.readFates.length + scenario.sendFates.length + 2;
  for (let i = 0; i < rounds; i += 1) {
    const done = sweep(`sweeper#backstop${i}`, false);
    await untilIdle(s);
    if ((await done) === 0) break;
  }
  return { memory, broker, timeline, stuck: [...running] };
}

/** The defect `markBeforeSend`: a sender that marks each entry published before the broker sees it. */
function markingFirst(inner: EventSender, store: DocumentStore, points: AwaitPoints, actor: Actor, now: () => Date): EventSender {
  return {
    close: () => inner.close(),
    send: async (destination, messages) => {
      for (const m of messages) {
        const orderId = String(m.sessionId);
        const current = await store.read<OutboxDocument>(orderId, outboxDocumentId(orderId));
        if (current?.document.state !== 'pending') continue;
        const marked: OutboxDocument = { ...current.document, state: 'published', publishedAt: now().toISOString() };
        await store.commit(orderId, [replace(marked, current.etag)]);
      }
      points.timeline.add(actor.name, 'marked its entries published before sending them');
      return inner.send(destination, messages);
    },
  };
}
