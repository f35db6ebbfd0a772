import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from '../../src/idempotency/index.js';
import type { DocumentStore } from '../../src/idempotency/index.js';
import { intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId, problemTypeBase } from '../../src/intake/index.js';
import type { IntakeResponse, OrderIntakeClaim } from '../../src/intake/index.js';
import { newOrderDocument } from '../../src/orders/documents.js';
import type { OutboxDocument } from '../../src/outbox/index.js';
import { createOrdersContainer, documentsOf, testCosmosClient } from '../support/cosmosTestContainer.js';
import { Gate, IntakeScriptedStore, ProcessKilled, intakeOn, keyRecordOf, orderRequest } from '../support/intakeHarness.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';
import { TestClock, cosmosStore } from '../support/shipmentHarness.js';

// The intake's decisions against the Cosmos stand-in through the SDK, driven directly: the clock,
// the crash points and the interleavings are the test's. The HTTP side is in the e2e suite.
let client: CosmosClient;
let container: Container;
let store: DocumentStore;

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  store = cosmosStore(container);
});

afterAll(async () => {
  await container.delete();
  client.dispose();
});

const newKey = () => randomUUID();
const problemOf = (response: IntakeResponse) =>
  response.body as { type: string; title: string; detail: string; orderId?: string; errors?: { path: string; message: string }[] };
const typeOf = (response: IntakeResponse) => problemOf(response).type.slice(problemTypeBase.length);

async function outboxOf(orderId: string): Promise<OutboxDocument[]> {
  return (await documentsOf(container, orderId)).filter((d) => d.docType === 'outbox') as unknown as OutboxDocument[];
}

describe('POST /api/orders: one order per Idempotency-Key', () => {
  it("accepts an order with 202, writing its claim and one OrderPlaced outbox entry for the orders queue, its MessageId the order id and the body's digest", async () => {
    const { submit, log } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const key = newKey();
    const response = await submit(orderRequest(key, orderPlaced(orderId)));
    const messageId = (response.body as { messageId: string }).messageId;
    expect(messageId).toMatch(new RegExp(`^${orderId}~[0-9a-f]{32}$`));
    expect(response).toEqual({
      status: 202,
      headers: { 'Content-Type': 'application/json' },
      body: { orderId, status: 'accepted', messageId, acceptedAt: '2026-12-01T10:00:00.000Z' },
    });
    const [entry, ...more] = await outboxOf(orderId);
    expect(more).toHaveLength(0);
    expect(entry).toMatchObject({
      id: orderPlacedOutboxId(orderId),
      eventType: 'OrderPlaced',
      destination: 'orders',
      state: 'pending',
      message: {
        messageId,
        subject: 'OrderPlaced',
        body: orderPlaced(orderId),
        applicationProperties: { 'cloudEvents:source': '/idempotent-order-consumer/intake', 'cloudEvents:id': messageId },
      },
    });
    expect(await keyRecordOf(store, key)).toMatchObject({ state: 'completed', requestOrderId: orderId, response, ttl: 172_800 });
    expect((await store.read<OrderIntakeClaim>(orderId, orderIntakeClaimId(orderId)))?.document).toMatchObject({ idempotencyKey: key, response });
    expect(log.lines).toEqual([
      {
        level: 'info',
        record: expect.objectContaining({ event: 'order-request', outcome: 'created', status: 202, idempotencyKey: key, orderId, replayed: false }),
      },
    ]);
  });

  it('replays the stored response to the same key and body, however the JSON is spaced or ordered, with Idempotent-Replayed and no second event', async () => {
    const clock = new TestClock();
    const { submit, log } = intakeOn(store, clock);
    const orderId = newOrderId();
    const key = newKey();
    const first = await submit(orderRequest(key, orderPlaced(orderId)));
    clock.advance(60_000);
    const { lines, ...rest } = orderPlaced(orderId);
    const again = await submit(orderRequest(key, JSON.stringify({ lines, ...rest }, null, 2)));
    expect(again).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect(await outboxOf(orderId)).toHaveLength(1);
    expect(log.lines[1]?.record).toMatchObject({ outcome: 'duplicate', status: 202, replayed: true });
  });

  it('refuses the same key with another body or another order with 422, naming no order, and writes nothing', async () => {
    const { submit, log } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const key = newKey();
    await submit(orderRequest(key, orderPlaced(orderId)));
    const changed = await submit(orderRequest(key, orderPlaced(orderId, { customerId: 'someone-else' })));
    expect(changed.status).toBe(422);
    expect(changed.headers['Content-Type']).toBe('application/problem+json');
    expect(typeOf(changed)).toBe('idempotency-key-reused');
    expect(problemOf(changed).detail).toContain('already used with another request');
    expect(JSON.stringify(changed.body)).not.toContain(orderId);
    const otherOrder = newOrderId();
    const elsewhere = await submit(orderRequest(key, orderPlaced(otherOrder)));
    expect(elsewhere.status).toBe(422);
    expect(problemOf(elsewhere)).toEqual(problemOf(changed));
    expect(await documentsOf(container, otherOrder)).toEqual([]);
    expect((await keyRecordOf(store, key))?.fingerprint).toBe((await store.read<OrderIntakeClaim>(orderId, orderIntakeClaimId(orderId)))?.document.fingerprint);
    expect(log.lines.slice(1).map((l) => [l.level, l.record.outcome])).toEqual([
      ['error', 'conflict'],
      ['error', 'conflict'],
    ]);
  });

  it('refuses another key for an order already submitted with 409 naming the order, and replays that answer to a retry of the same key', async () => {
    const { submit, log } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    await submit(orderRequest(newKey(), orderPlaced(orderId)));
    const second = newKey();
    const refused = await submit(orderRequest(second, orderPlaced(orderId)));
    expect(refused.status).toBe(409);
    expect(typeOf(refused)).toBe('order-exists');
    expect(problemOf(refused)).toMatchObject({
      orderId,
      detail: expect.stringContaining(`order ${orderId} was already submitted with another Idempotency-Key`),
    });
    expect(refused.headers['Retry-After']).toBeUndefined();
    expect(await outboxOf(orderId)).toHaveLength(1);
    const retried = await submit(orderRequest(second, orderPlaced(orderId)));
    expect(retried).toEqual({ ...refused, headers: { ...refused.headers, 'Idempotent-Replayed': 'true' } });
    expect(log.lines.map((l) => [l.level, l.record.outcome, l.record.status])).toEqual([
      ['info', 'created', 202],
      ['error', 'invalid', 409],
      ['info', 'duplicate', 409],
    ]);
  });

  it('never publishes a second OrderPlaced: an entry for the order without its claim (written by another tool) is a 409', async () => {
    const { submit } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const handWritten = { id: orderPlacedOutboxId(orderId), orderId, docType: 'outbox', state: 'pending' };
    await store.commit(orderId, [create(handWritten)]);
    const response = await submit(orderRequest(newKey(), orderPlaced(orderId)));
    expect([response.status, typeOf(response)]).toEqual([409, 'order-exists']);
    expect(await store.read(orderId, orderIntakeClaimId(orderId))).toBeUndefined();
  });

  it('accepts a key of exactly 255 characters and a body of exactly the limit', async () => {
    const orderId = newOrderId();
    const body = JSON.stringify(orderPlaced(orderId));
    const { submit } = intakeOn(store, new TestClock(), Buffer.byteLength(body));
    const response = await submit(orderRequest('k'.repeat(255), body, { 'Content-Length': String(Buffer.byteLength(body)) }));
    expect(response.status).toBe(202);
  });

  it('refuses a body that is not UTF-8 even where a lenient decoder would make valid JSON of it', async () => {
    const orderId = newOrderId();
    const text = JSON.stringify(orderPlaced(orderId, { customerId: 'c-#' }));
    const bytes = Buffer.from(text, 'latin1');
    bytes[text.indexOf('#')] = 0xff;
    const response = await intakeOn(store, new TestClock()).submit(orderRequest(newKey(), new Uint8Array(bytes)));
    expect([response.status, typeOf(response)]).toEqual([400, 'body-not-json']);
    expect(await documentsOf(container, orderId)).toEqual([]);
  });

  it('refuses an order placed on the queue directly (an order document and no claim) with 409, publishing nothing', async () => {
    const { submit } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const order = newOrderDocument(orderPlaced(orderId), { messageId: 'm-queue', dedupKey: 'm-queue', fingerprint: 'f', processedAt: '2026-12-01T09:00:00Z' });
    await store.commit(orderId, [create(order)]);
    const response = await submit(orderRequest(newKey(), orderPlaced(orderId)));
    expect([response.status, typeOf(response)]).toEqual([409, 'order-exists']);
    expect(await outboxOf(orderId)).toEqual([]);
  });

  it('replays from the order claim a retry that comes after the key record expired', async () => {
    const { submit } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const key = newKey();
    const first = await submit(orderRequest(key, orderPlaced(orderId)));
    await container.item(intakeKeyRecordId(key), intakeKeyRecordId(key)).delete(); // what its TTL does
    const late = await submit(orderRequest(key, orderPlaced(orderId)));
    expect(late).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect(await outboxOf(orderId)).toHaveLength(1);
  });

  it('refuses with 422 the same key with another body once the key record has expired: the order claim still knows the first body', async () => {
    const { submit } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const key = newKey();
    await submit(orderRequest(key, orderPlaced(orderId)));
    await container.item(intakeKeyRecordId(key), intakeKeyRecordId(key)).delete();
    const changed = await submit(orderRequest(key, orderPlaced(orderId, { customerId: 'someone-else' })));
    expect([changed.status, typeOf(changed)]).toEqual([422, 'idempotency-key-reused']);
    expect(await outboxOf(orderId)).toHaveLength(1);
  });
});

describe('POST /api/orders: concurrent copies and crashes', () => {
  it('answers 409 with Retry-After to a copy that arrives while the first is still being handled, then replays the first answer', async () => {
    const clock = new TestClock();
    const shared = new IntakeScriptedStore(store);
    const slow = intakeOn(shared, clock);
    const orderId = newOrderId();
    const key = newKey();
    const gate = new Gate();
    shared.holdBeforeClaimBatch = gate;
    const first = slow.submit(orderRequest(key, orderPlaced(orderId)));
    await gate.reached();
    const waiting = intakeOn(shared.sibling(), clock);
    const copy = await waiting.submit(orderRequest(key, orderPlaced(orderId)));
    expect(waiting.log.lines).toEqual([{ level: 'warn', record: expect.objectContaining({ outcome: 'retry', status: 409, reason: 'request-in-progress' }) }]);
    expect(copy.status).toBe(409);
    expect(copy.headers['Retry-After']).toBe('1');
    expect(typeOf(copy)).toBe('request-in-progress');
    expect(await outboxOf(orderId)).toEqual([]);
    gate.open();
    const answer = await first;
    expect(answer.status).toBe(202);
    const retry = await intakeOn(shared.sibling(), clock).submit(orderRequest(key, orderPlaced(orderId)));
    expect(retry).toEqual({ ...answer, headers: { ...answer.headers, 'Idempotent-Replayed': 'true' } });
  });

  it('gives the stored response to the retry of a request whose process died after its batch, before it answered, at once and with no second event', async () => {
    const clock = new TestClock();
    const dying = new IntakeScriptedStore(store);
    dying.killAfterClaimBatch = true;
    const orderId = newOrderId();
    const key = newKey();
    await expect(intakeOn(dying, clock).submit(orderRequest(key, orderPlaced(orderId)))).rejects.toBeInstanceOf(ProcessKilled);
    expect(await keyRecordOf(store, key)).toMatchObject({ state: 'in-progress' });
    // The lease is still live: the claim, not the clock, tells the retry the batch committed.
    const retrying = intakeOn(dying.sibling(), clock);
    const retry = await retrying.submit(orderRequest(key, orderPlaced(orderId)));
    expect(retry.status).toBe(202);
    expect(retry.headers['Idempotent-Replayed']).toBe('true');
    expect(retrying.log.lines[0]?.record).toMatchObject({ outcome: 'duplicate', replayed: true });
    expect(retry.body).toEqual((await store.read<OrderIntakeClaim>(orderId, orderIntakeClaimId(orderId)))?.document.response.body);
    expect(await keyRecordOf(store, key)).toMatchObject({ state: 'completed' });
    expect(await outboxOf(orderId)).toHaveLength(1);
  });

  it('lets a retry take over the key of a process that died before its batch once the lease has expired, and not before', async () => {
    const clock = new TestClock();
    const dying = new IntakeScriptedStore(store);
    dying.killBeforeClaimBatch = true;
    const orderId = newOrderId();
    const key = newKey();
    await expect(intakeOn(dying, clock).submit(orderRequest(key, orderPlaced(orderId)))).rejects.toBeInstanceOf(ProcessKilled);
    const early = await intakeOn(store, clock).submit(orderRequest(key, orderPlaced(orderId)));
    expect(early.status).toBe(409);
    clock.advance(10_000); // the lease (10 s) ends
    const late = await intakeOn(store, clock).submit(orderRequest(key, orderPlaced(orderId)), 'invocation-after');
    expect(late.status).toBe(202);
    expect(late.headers['Idempotent-Replayed']).toBeUndefined();
    expect(await keyRecordOf(store, key)).toMatchObject({ state: 'completed', owner: 'invocation-after', attempt: 2 });
    expect(await outboxOf(orderId)).toHaveLength(1);
  });

  it('keeps one event when a slow first request and the request that took over its key both reach the batch', async () => {
    const clock = new TestClock();
    const slowStore = new IntakeScriptedStore(store);
    const gate = new Gate();
    slowStore.holdBeforeClaimBatch = gate;
    const orderId = newOrderId();
    const key = newKey();
    const slow = intakeOn(slowStore, clock).submit(orderRequest(key, orderPlaced(orderId)));
    await gate.reached();
    clock.advance(11_000);
    const takeover = await intakeOn(store, clock).submit(orderRequest(key, orderPlaced(orderId)));
    gate.open();
    const late = await slow;
    expect([takeover.status, late.status]).toEqual([202, 202]);
    expect(late.headers['Idempotent-Replayed']).toBe('true');
    expect(late.body).toEqual(takeover.body);
    expect(await outboxOf(orderId)).toHaveLength(1);
  });

  it('answers 503 with Retry-After when the store fails, and hands the key back so the retry is served at once', async () => {
    const clock = new TestClock();
    const flaky = new IntakeScriptedStore(store);
    flaky.failClaimBatchOnce = true;
    const { submit, log } = intakeOn(flaky, clock);
    const orderId = newOrderId();
    const key = newKey();
    const failed = await submit(orderRequest(key, orderPlaced(orderId)));
    expect([failed.status, failed.headers['Retry-After'], typeOf(failed)]).toEqual([503, '5', 'store-unavailable']);
    expect(log.lines[0]).toMatchObject({ level: 'warn', record: { outcome: 'unavailable', status: 503 } });
    expect(await outboxOf(orderId)).toEqual([]);
    const retry = await intakeOn(store, clock).submit(orderRequest(key, orderPlaced(orderId)));
    expect(retry.status).toBe(202);
    expect(retry.headers['Idempotent-Replayed']).toBeUndefined();
  });

  it('completes the key once when the first request and a retry both finish it', async () => {
    const clock = new TestClock();
    const slowStore = new IntakeScriptedStore(store);
    const gate = new Gate();
    slowStore.holdBeforeCompletion = gate;
    const orderId = newOrderId();
    const key = newKey();
    const first = intakeOn(slowStore, clock).submit(orderRequest(key, orderPlaced(orderId)));
    await gate.reached();
    const retry = await intakeOn(store, clock).submit(orderRequest(key, orderPlaced(orderId)));
    gate.open();
    const answer = await first;
    expect(answer.status).toBe(202);
    expect(retry).toEqual({ ...answer, headers: { ...answer.headers, 'Idempotent-Replayed': 'true' } });
    expect(await keyRecordOf(store, key)).toMatchObject({ state: 'completed', response: answer });
  });
});

describe('POST /api/orders: requests refused before anything is written', () => {
  const refusals: [string, () => ReturnType<typeof orderRequest>, number, string][] = [
    ['no Idempotency-Key', () => orderRequest(undefined, orderPlaced('o-refused')), 400, 'idempotency-key-missing'],
    [
      'a bare Idempotency-Key with a space',
      () => orderRequest(undefined, orderPlaced('o-refused'), { 'Idempotency-Key': 'a b' }),
      400,
      'idempotency-key-malformed',
    ],
    [
      'an Idempotency-Key with a control character',
      () => orderRequest(undefined, orderPlaced('o-refused'), { 'Idempotency-Key': 'a\tb' }),
      400,
      'idempotency-key-malformed',
    ],
    [
      'two Idempotency-Key values',
      () => orderRequest(undefined, orderPlaced('o-refused'), { 'Idempotency-Key': 'abc, abc' }),
      400,
      'idempotency-key-malformed',
    ],
    ['an empty sf-string key', () => orderRequest(undefined, orderPlaced('o-refused'), { 'Idempotency-Key': '""' }), 400, 'idempotency-key-malformed'],
    ['a key of 256 characters', () => orderRequest('k'.repeat(256), orderPlaced('o-refused')), 400, 'idempotency-key-malformed'],
    ['text/plain', () => orderRequest(newKey(), orderPlaced('o-refused'), { 'Content-Type': 'text/plain' }), 415, 'unsupported-media-type'],
    [
      'JSON in Latin-1',
      () => orderRequest(newKey(), orderPlaced('o-refused'), { 'Content-Type': 'application/json; charset=iso-8859-1' }),
      415,
      'unsupported-media-type',
    ],
    [
      'no Content-Type',
      () => ({ ...orderRequest(newKey(), orderPlaced('o-refused')), headers: new Headers({ 'Idempotency-Key': '"k"' }) }),
      415,
      'unsupported-media-type',
    ],
    ['a body that is not JSON', () => orderRequest(newKey(), '{"orderId": "o-refused",'), 400, 'body-not-json'],
    ['a body that is not UTF-8', () => orderRequest(newKey(), new Uint8Array([0x7b, 0xff, 0x7d])), 400, 'body-not-json'],
    ['a body over the limit', () => orderRequest(newKey(), orderPlaced('o-refused', { customerId: 'x'.repeat(2000) })), 413, 'body-too-large'],
    ['a declared Content-Length over the limit', () => orderRequest(newKey(), orderPlaced('o-refused'), { 'Content-Length': '5000' }), 413, 'body-too-large'],
  ];
  for (const [what, request, status, type] of refusals) {
    it(`answers ${what} with ${status} ${type}`, async () => {
      const { submit, log } = intakeOn(store, new TestClock(), 1024);
      const response = await submit(request());
      expect([response.status, typeOf(response)]).toEqual([status, type]);
      expect(response.headers['Content-Type']).toBe('application/problem+json');
      expect(problemOf(response).detail.length).toBeGreaterThan(20);
      expect(problemOf(response).title.length).toBeGreaterThan(10);
      expect(await documentsOf(container, 'o-refused')).toEqual([]);
      expect(log.lines).toEqual([{ level: 'warn', record: expect.objectContaining({ outcome: 'refused', status, reason: type }) }]);
    });
  }

  it('answers an order that breaks the schema with 400 and every field path, writing no key record', async () => {
    const { submit } = intakeOn(store, new TestClock());
    const key = newKey();
    const response = await submit(orderRequest(key, orderPlaced(' o-1', { currency: 'XXX1', lines: [{ sku: 'A', quantity: 0, unitPrice: -1 }] })));
    expect([response.status, typeOf(response)]).toEqual([400, 'invalid-order']);
    expect(problemOf(response).errors?.map((e) => e.path)).toEqual(['orderId', 'currency', 'lines[0].quantity', 'lines[0].unitPrice']);
    expect(problemOf(response).detail).toContain('lines[0].quantity: ');
    expect(await keyRecordOf(store, key)).toBeUndefined();
  });

  it("accepts a bare key as Stripe's clients send it, and replays its answer to the same key quoted", async () => {
    const { submit } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const key = newKey();
    const bare = await submit(orderRequest(undefined, orderPlaced(orderId), { 'Idempotency-Key': key }));
    expect(bare.status).toBe(202);
    const quoted = await submit(orderRequest(key, orderPlaced(orderId)));
    expect(quoted).toEqual({ ...bare, headers: { ...bare.headers, 'Idempotent-Replayed': 'true' } });
    expect(await keyRecordOf(store, key)).toMatchObject({ idempotencyKey: key, state: 'completed', response: bare });
    expect(await outboxOf(orderId)).toHaveLength(1);
  });

  it('accepts JSON declared with charset=utf-8, and a key with escaped quotes, stored as the client meant it', async () => {
    const { submit } = intakeOn(store, new TestClock());
    const orderId = newOrderId();
    const response = await submit(
      orderRequest(undefined, orderPlaced(orderId), { 'Content-Type': 'Application/JSON; charset="UTF-8"', 'Idempotency-Key': '"a \\"quoted\\" key"' }),
    );
    expect(response.status).toBe(202);
    expect(await keyRecordOf(store, 'a "quoted" key')).toMatchObject({ idempotencyKey: 'a "quoted" key' });
  });
});
