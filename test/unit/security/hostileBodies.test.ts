import { metrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { OrderConsumer, parseOrderMessage } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { parseShipmentEvent } from '../../../src/shipments/orderAcceptedEvent.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../../src/telemetry/index.js';
import { permanentFailureOf } from '../../support/permanentFailure.js';
import { RecordingLog } from '../../support/recordingLog.js';

// Bodies a sender can craft to make a recursive walk (canonical JSON, fingerprint, logging)
// overflow the stack: every way a body arrives is bounded before anything walks it, and whatever
// cannot be parsed or walked is permanent, never a failure that heals with time.
const options = { maxMessageBytes: 262_144 };
const deepText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepValue = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
};
const ce = (extra: Record<string, unknown>) => ({ specversion: '1.0', id: 'e-1', source: '/shop', type: 'com.shop.PaymentReceived', ...extra });
const structured = { messageId: 'm-1', contentType: 'application/cloudevents+json' };

describe('a body nested 5,000 deep', () => {
  it('in a structured CloudEvent data_base64 (13 KB) is refused as BodyTooDeep', () => {
    const body = JSON.stringify(ce({ data_base64: Buffer.from(deepText(5_000)).toString('base64') }));
    expect(body.length).toBeLessThan(14_000);
    const error = permanentFailureOf(() => parseOrderMessage(envelopeFromTriggerMetadata(structured), body, options));
    expect(error.code).toBe('BodyTooDeep');
    expect(error.description).toContain('data_base64');
  });

  it('in a structured CloudEvent data_base64, for the shipments consumer too', () => {
    const body = JSON.stringify({ ...ce({ data_base64: Buffer.from(deepText(5_000)).toString('base64') }), type: 'com.shop.OrderAccepted' });
    expect(permanentFailureOf(() => parseShipmentEvent(envelopeFromTriggerMetadata(structured), body, 262_144)).code).toBe('BodyTooDeep');
  });

  it('in a structured CloudEvent data field, as text, as bytes or handed over parsed, is refused as BodyTooDeep', () => {
    const text = JSON.stringify(ce({ data: 0 })).replace('"data":0', `"data":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`);
    for (const body of [text, Buffer.from(text), JSON.parse(text) as unknown]) {
      expect(permanentFailureOf(() => parseOrderMessage(envelopeFromTriggerMetadata(structured), body, options)).code).toBe('BodyTooDeep');
    }
  });

  it('as a binary CloudEvent body, as text, as bytes or parsed, is refused as BodyTooDeep', () => {
    const binary = {
      messageId: 'm-1',
      contentType: 'application/json',
      applicationProperties: { 'cloudEvents:id': 'e-1', 'cloudEvents:source': '/shop', 'cloudEvents:type': 'com.shop.PaymentReceived' },
    };
    for (const body of [deepText(5_000), Buffer.from(deepText(5_000)), deepValue(5_000)]) {
      expect(permanentFailureOf(() => parseOrderMessage(envelopeFromTriggerMetadata(binary), body, options)).code).toBe('BodyTooDeep');
    }
  });

  it('ends rejected (invalid), never retried, in the order consumer', async () => {
    const store = new InMemoryDocumentStore(() => Date.parse('2026-11-30T12:00:00Z'));
    const consumer = new OrderConsumer({
      store,
      now: () => new Date('2026-11-30T12:00:00Z'),
      markerTtlSeconds: 3600,
      orderEventsDestination: 'order-events',
      maxMessageBytes: 262_144,
      maxConcurrencyAttempts: 5,
      telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('unit'))),
    });
    const body = JSON.stringify(ce({ data_base64: Buffer.from(deepText(5_000)).toString('base64') }));
    const result = await consumer.consume(envelopeFromTriggerMetadata({ ...structured, sequenceNumber: 1 }), body, new RecordingLog());
    expect(result.outcome.kind).toBe('invalid');
    expect(result.outcome.kind === 'invalid' && result.outcome.error.code).toBe('BodyTooDeep');
    // A value no JSON walk can handle (the host never hands one, a test double could): permanent too.
    const unwalkable = await consumer.consume(
      envelopeFromTriggerMetadata({ messageId: 'm-2', subject: 'PaymentReceived', sequenceNumber: 2 }),
      { orderId: 'o-1', n: 1n },
      new RecordingLog(),
    );
    expect(unwalkable.outcome.kind === 'invalid' && unwalkable.outcome.error.code).toBe('InvalidBody');
  });
});

describe('a data_base64 that is not JSON', () => {
  it('is refused as InvalidBody-free InvalidJson, naming data_base64', () => {
    const body = JSON.stringify(ce({ data_base64: Buffer.from('{nope').toString('base64') }));
    const error = permanentFailureOf(() => parseOrderMessage(envelopeFromTriggerMetadata(structured), body, options));
    expect(error.code).toBe('InvalidJson');
    expect(error.description).toContain('data_base64');
  });
});
