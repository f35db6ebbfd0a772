import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { orderPlacedOutboxId, readOrderRequest } from '../../../src/intake/index.js';
import type { OutboxDocument } from '../../../src/outbox/index.js';
import { decodeJsonBody } from '../../../src/servicebus/messageBody.js';
import { intakeOn } from '../../support/intakeHarness.js';
import { TestClock } from '../../support/shipmentHarness.js';
import { idempotencyKeyHeader } from '../../../src/http/idempotencyKeyHeader.js';

// INTAKE_MAX_BODY_BYTES may be as large as MAX_MESSAGE_BYTES, "so an accepted order can always be
// delivered". What is delivered is not the client's text but the validated order written out again:
// fields the schema ignores left out, and every number in its shortest plain form, which is longer
// than a client's `1e5` (100000). Both settings here are at MAX_MESSAGE_BYTES's lowest, 1024 bytes.
const limitBytes = 1024;

/** An order written compactly, its numbers in exponent form: `lines` lines of 10,000 at 100,000. */
function compactOrder(lines: number): string {
  const line = '{"sku":"s","quantity":1e4,"unitPrice":1e5}';
  return `{"orderId":"o-1","customerId":"c","currency":"EUR","placedAt":"2026-11-30T08:00:00Z","lines":[${Array(lines).fill(line).join(',')}]}`;
}

function post(text: string) {
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({ start: (controller) => (controller.enqueue(bytes), controller.close()) });
  return { headers: new Headers({ 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKeyHeader('k-1') }), body };
}

describe('an order within INTAKE_MAX_BODY_BYTES as the client wrote it', () => {
  it('is refused with 413, writing nothing, when the order as it is sent on is over the limit: the consumer would dead-letter it as MessageTooLarge', async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    const text = compactOrder(21);
    expect(new TextEncoder().encode(text).byteLength).toBeLessThanOrEqual(limitBytes);

    const answer = await intakeOn(store, clock, limitBytes).submit(post(text));

    const entry = (await store.read<OutboxDocument>('o-1', orderPlacedOutboxId('o-1')))?.document;
    // Were it accepted, the orders consumer (MAX_MESSAGE_BYTES = the same limit) could not read what it is sent.
    if (entry) expect(() => decodeJsonBody(entry.message.body, limitBytes)).not.toThrow();
    expect(answer).toMatchObject({ status: 413, body: { type: 'urn:idempotent-order-consumer:problem:body-too-large' } });
    expect((answer.body as { detail: string }).detail).toMatch(/as it is sent on.*1103 bytes.*at most 1024 bytes \(INTAKE_MAX_BODY_BYTES\)/);
    expect(entry).toBeUndefined();
  });

  it('is accepted when the order as it is sent on is within the limit too', async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());

    const answer = await intakeOn(store, clock, limitBytes).submit(post(compactOrder(19)));

    expect(answer.status).toBe(202);
    const entry = (await store.read<OutboxDocument>('o-1', orderPlacedOutboxId('o-1')))?.document;
    expect(() => decodeJsonBody(entry?.message.body, limitBytes)).not.toThrow();
  });

  it('is accepted at exactly the limit as it is sent on, and refused a byte under it', async () => {
    const sentOnBytes = new TextEncoder().encode(JSON.stringify(JSON.parse(compactOrder(19)))).byteLength;

    expect(await readOrderRequest(post(compactOrder(19)), sentOnBytes)).toMatchObject({ order: { orderId: 'o-1' } });
    expect(await readOrderRequest(post(compactOrder(19)), sentOnBytes - 1)).toMatchObject({ status: 413 });
  });
});
