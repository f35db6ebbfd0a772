import { metrics } from '@opentelemetry/api';
import { InMemoryDocumentStore, create, fingerprintPayload, replace } from '../../src/idempotency/index.js';
import { OrderConsumer, parkingLotId } from '../../src/orders/index.js';
import type { ConsumeResult, OrderDocument, ParkedItemDocument, ParkingLotDocument } from '../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../src/telemetry/index.js';
import { InterleavingStore } from './interleavingStore.js';
import { RecordingLog } from './recordingLog.js';

export const flowStartMs = Date.parse('2026-11-30T12:00:00Z');

/**
 * The order flows over the reference in-memory store, with a clock the test moves and a store it
 * can interleave other writers into: pure logic, every race and expiry on cue.
 */
/** A retention that satisfies the parked-item rule for the sweeper tests' one-hour horizon (3600 + a resubmit horizon). */
export const parkedItemTtlSeconds = 3 * 86_400;

export function orderFlow(
  options: {
    readonly markerTtlSeconds?: number;
    readonly maxConcurrencyAttempts?: number;
    readonly sleep?: (ms: number) => Promise<void>;
    readonly random?: () => number;
    /** Verifies delayed-retry copies' state (RETRY_STATE_SIGNING_KEY); without it, none verifies. */
    readonly retryStateKey?: string;
    readonly consumerName?: string;
  } = {},
) {
  let nowMs = flowStartMs;
  const memory = new InMemoryDocumentStore(() => nowMs);
  const store = new InterleavingStore(memory);
  const ctx = {
    store,
    now: () => new Date(nowMs),
    markerTtlSeconds: options.markerTtlSeconds ?? 3600,
    maxConcurrencyAttempts: options.maxConcurrencyAttempts ?? 5,
    orderEventsDestination: 'order-events',
    sleep: options.sleep,
    random: options.random,
  };
  const consumer = new OrderConsumer({
    ...ctx,
    maxMessageBytes: 262_144,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
    ...(options.retryStateKey === undefined ? {} : { retryStateKey: options.retryStateKey }),
    ...(options.consumerName === undefined ? {} : { consumerName: options.consumerName }),
  });
  const log = new RecordingLog();
  let sequence = 0;
  const send = (
    messageId: string,
    subject: string,
    body: unknown,
    deliveryCount = 1,
    applicationProperties?: Record<string, string | number>,
  ): Promise<ConsumeResult> =>
    consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: (sequence += 1), applicationProperties }), body, log);
  const order = async (orderId: string) => (await memory.read<OrderDocument>(orderId, orderId))?.document;
  const parked = (orderId: string) => memory.list(orderId).filter((d): d is ParkedItemDocument => (d as ParkedItemDocument).docType === 'parked');
  return { memory, store, ctx, consumer, log, send, order, parked, advance: (seconds: number) => (nowMs += seconds * 1000) };
}

/**
 * Writes a parked item straight into the store, as a crash between an order's batches leaves it:
 * still `parked` for an order that may be stored. Returns its id.
 */
export async function leftParked(
  flow: ReturnType<typeof orderFlow>,
  orderId: string,
  messageId: string,
  messageType: ParkedItemDocument['messageType'],
  payload: Record<string, unknown>,
  parkedAtMs = flowStartMs,
): Promise<string> {
  const item = {
    id: `parked|${messageType === 'PaymentReceived' ? 'payment' : 'status'}|${messageId}`,
    orderId,
    docType: 'parked',
    state: 'parked',
    messageType,
    messageId,
    dedupKey: messageId,
    fingerprint: fingerprintPayload(messageType, payload),
    payload,
    parkedAt: new Date(parkedAtMs).toISOString(),
  } as ParkedItemDocument;
  const result = await flow.memory.commit(orderId, [create(item)]);
  if (result.kind !== 'committed') throw new Error(`parking ${item.id} by hand: ${result.kind}`);
  return item.id;
}

/** Another writer touches the order's arrival gate (as a parker joining does): its etag moves. */
export async function touchGate(flow: ReturnType<typeof orderFlow>, orderId: string): Promise<void> {
  const lot = await flow.memory.read<ParkingLotDocument>(orderId, parkingLotId(orderId));
  if (!lot) throw new Error(`order ${orderId} has no arrival gate to touch`);
  const touched: ParkingLotDocument = { ...lot.document, changedAt: new Date().toISOString() };
  await flow.memory.commit(orderId, [replace(touched, lot.etag)]);
}
