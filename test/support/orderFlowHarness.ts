import { metrics } from '@opentelemetry/api';
import { InMemoryDocumentStore } from '../../src/idempotency/index.js';
import { OrderConsumer } from '../../src/orders/index.js';
import type { ConsumeResult, OrderDocument, ParkedItemDocument } from '../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../src/telemetry/index.js';
import { InterleavingStore } from './interleavingStore.js';
import { RecordingLog } from './recordingLog.js';

export const flowStartMs = Date.parse('2026-11-30T12:00:00Z');

/**
 * The order flows over the reference in-memory store, with a clock the test moves and a store it
 * can interleave other writers into: pure logic, every race and expiry on cue.
 */
export function orderFlow(options: { readonly maxConcurrencyAttempts?: number } = {}) {
  let nowMs = flowStartMs;
  const memory = new InMemoryDocumentStore(() => nowMs);
  const store = new InterleavingStore(memory);
  const ctx = { store, now: () => new Date(nowMs), markerTtlSeconds: 3600, maxConcurrencyAttempts: options.maxConcurrencyAttempts ?? 5, orderEventsDestination: 'order-events' };
  const consumer = new OrderConsumer({ ...ctx, maxMessageBytes: 262_144, telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))) });
  const log = new RecordingLog();
  let sequence = 0;
  const send = (messageId: string, subject: string, body: unknown, deliveryCount = 1, applicationProperties?: Record<string, string>): Promise<ConsumeResult> =>
    consumer.consume(envelopeFromTriggerMetadata({ messageId, subject, deliveryCount, sequenceNumber: (sequence += 1), applicationProperties }), body, log);
  const order = async (orderId: string) => (await memory.read<OrderDocument>(orderId, orderId))?.document;
  const parked = (orderId: string) => memory.list(orderId).filter((d): d is ParkedItemDocument => (d as ParkedItemDocument).docType === 'parked');
  return { memory, store, ctx, consumer, log, send, order, parked, advance: (seconds: number) => (nowMs += seconds * 1000) };
}
