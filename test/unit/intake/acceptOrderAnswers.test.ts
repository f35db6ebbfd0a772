import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import type { DocumentStore, StoredDocument } from '../../../src/idempotency/index.js';
import { intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId } from '../../../src/intake/index.js';
import type { IntakeResponse, OrderIntakeClaim } from '../../../src/intake/index.js';
import { messageIdNamingBody } from '../../../src/outbox/outboxDocument.js';
import { AnsweringStore, firstIs } from '../../support/answeringStore.js';
import { Gate, IntakeScriptedStore, intakeOn, intakeSettings, keyRecordOf, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// The answers the intake gives, word for word, and the stored state behind them, for the paths a
// client meets less often: an order id taken outside the intake, a request still in progress, a
// claim read back after a lost answer, a key record that cannot be completed.
function setUp() {
  const clock = new TestClock();
  const memory = new InMemoryDocumentStore(() => clock.now().getTime());
  const store = new IntakeScriptedStore(memory);
  return { clock, memory, store };
}

const problemType = (code: string) => `urn:idempotent-order-consumer:problem:${code}`;
const bodyOf = (response: IntakeResponse) => response.body as Record<string, unknown>;
const orderIdTaken = {
  type: problemType('order-exists'),
  title: 'The order id is taken',
  status: 409,
  detail: 'an order with this order id exists and was not submitted by this caller; it is not submitted again: use a new order id for a new order',
};
const alice = { 'X-MS-CLIENT-PRINCIPAL-ID': 'aaaaaaaa-0000-0000-0000-000000000001' };
const bob = { 'X-MS-CLIENT-PRINCIPAL-ID': 'bbbbbbbb-0000-0000-0000-000000000002' };
const leasePast = (intakeSettings.leaseSeconds + 1) * 1000;

describe('an order id taken outside the intake', () => {
  it('answers 409 "the order id is taken", logged as invalid (an error), when the order exists without a claim', async () => {
    const t = setUp();
    await t.memory.commit('o-1', [create({ id: 'o-1', orderId: 'o-1', docType: 'order' } as StoredDocument)]);
    const intake = intakeOn(t.store, t.clock);

    const refused = await intake.submit(orderRequest('k-1', orderPlaced('o-1')));

    expect([refused.status, bodyOf(refused)]).toEqual([409, orderIdTaken]);
    expect(intake.log.lines.map((l) => [l.level, l.record.outcome])).toEqual([['error', 'invalid']]);
    expect(await t.memory.read('o-1', orderIntakeClaimId('o-1'))).toBeUndefined();
  });

  it('answers 409 "the order id is taken", logged as invalid, when an OrderPlaced entry exists without a claim, and publishes no second', async () => {
    const t = setUp();
    await t.memory.commit('o-1', [create({ id: orderPlacedOutboxId('o-1'), orderId: 'o-1', docType: 'outbox', hand: 'written' } as StoredDocument)]);
    const intake = intakeOn(t.store, t.clock);

    const refused = await intake.submit(orderRequest('k-1', orderPlaced('o-1')));

    expect([refused.status, bodyOf(refused)]).toEqual([409, orderIdTaken]);
    expect(intake.log.lines.map((l) => [l.level, l.record.outcome])).toEqual([['error', 'invalid']]);
    expect((await t.memory.read('o-1', orderPlacedOutboxId('o-1')))?.document).toMatchObject({ hand: 'written' });
    expect(await keyRecordOf(t.memory, 'k-1')).toMatchObject({ state: 'completed', response: refused });
  });

  it('answers another principal the same 409, logged as invalid, naming nothing of the order', async () => {
    const t = setUp();
    await intakeOn(t.store, t.clock, 64 * 1024, 'entra').submit(orderRequest('k-1', orderPlaced('o-1'), bob));
    const intake = intakeOn(t.store, t.clock, 64 * 1024, 'entra');

    const refused = await intake.submit(orderRequest('k-1', orderPlaced('o-1'), alice));

    expect([refused.status, bodyOf(refused)]).toEqual([409, orderIdTaken]);
    expect(intake.log.lines.map((l) => [l.level, l.record.outcome])).toEqual([['error', 'invalid']]);
  });
});

describe('a retry whose key record was left in progress', () => {
  it('never replays another principal\'s acceptance of the same body under the same key: 409 "the order id is taken"', async () => {
    const t = setUp();
    await intakeOn(t.store, t.clock, 64 * 1024, 'entra').submit(orderRequest('k-1', orderPlaced('o-1'), bob));
    const failing = t.store.sibling();
    failing.failCompletion = true;
    const first = await intakeOn(failing, t.clock, 64 * 1024, 'entra').submit(orderRequest('k-1', orderPlaced('o-1'), alice));
    expect(first.status).toBe(409);
    t.clock.advance(leasePast);

    const retry = await intakeOn(t.store.sibling(), t.clock, 64 * 1024, 'entra').submit(orderRequest('k-1', orderPlaced('o-1'), alice));

    expect([retry.status, bodyOf(retry)]).toEqual([409, orderIdTaken]);
  });

  it('never replays the acceptance of the same body under another key of ours: 409 "the order exists" naming it', async () => {
    const t = setUp();
    await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    const failing = t.store.sibling();
    failing.failCompletion = true;
    expect((await intakeOn(failing, t.clock).submit(orderRequest('k-2', orderPlaced('o-1')))).status).toBe(409);
    expect(await keyRecordOf(t.memory, 'k-2')).toMatchObject({ state: 'in-progress' });
    t.clock.advance(leasePast);

    const retry = await intakeOn(t.store.sibling(), t.clock).submit(orderRequest('k-2', orderPlaced('o-1')));

    expect([retry.status, bodyOf(retry)]).toEqual([
      409,
      {
        type: problemType('order-exists'),
        title: 'The order exists',
        status: 409,
        detail: 'order o-1 was already submitted with another Idempotency-Key; it is not submitted again',
        orderId: 'o-1',
      },
    ]);
  });
});

describe('a request still being handled', () => {
  it('answers 409 request-in-progress with its title, the wait in the detail, the order id and Retry-After', async () => {
    const t = setUp();
    const gate = new Gate();
    t.store.holdBeforeClaimBatch = gate;
    const first = intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    await gate.reached();

    const waiting = await intakeOn(t.store.sibling(), t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    gate.open();
    await first;

    expect(waiting).toEqual({
      status: 409,
      headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '1' },
      body: {
        type: problemType('request-in-progress'),
        title: 'A request with this Idempotency-Key is still being handled',
        status: 409,
        detail: "retry after 1 s with the same key and body; you will get that request's response",
        orderId: 'o-1',
      },
    });
  });
});

describe('a key reused with another body', () => {
  it('answers 422 with the title that says so', async () => {
    const t = setUp();
    await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    const reused = await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1', { customerId: 'other' })));
    expect([reused.status, bodyOf(reused).title]).toEqual([422, 'Idempotency-Key reused with another request']);
  });
});

describe('the OrderPlaced entry', () => {
  it("carries the MessageId naming the order and an OrderPlaced body's digest, as every producer of OrderPlaced derives it", async () => {
    const t = setUp();
    const order = orderPlaced('o-1');
    const answer = await intakeOn(t.store, t.clock).submit(orderRequest('k-1', order));
    const entry = (await t.memory.read<StoredDocument & { message: { messageId: string } }>('o-1', orderPlacedOutboxId('o-1')))?.document.message;
    expect(entry?.messageId).toBe(messageIdNamingBody('o-1', 'OrderPlaced', order));
    expect(bodyOf(answer).messageId).toBe(entry?.messageId);
  });
});

describe("the claim batch's answer lost", () => {
  it("replays the claim of a copy of this same request that won the batch, not this copy's own answer", async () => {
    const t = setUp();
    const gate = new Gate();
    t.store.holdBeforeClaimBatch = gate;
    t.store.loseClaimBatchAnswerOnce = true;
    const intake = intakeOn(t.store, t.clock);
    const submitted = intake.submit(orderRequest('k-1', orderPlaced('o-1')));
    await gate.reached();
    // A copy of the same request (same key, same body) took the key over and its batch landed first.
    const fingerprint = (await keyRecordOf(t.memory, 'k-1'))?.fingerprint ?? '';
    const winner: OrderIntakeClaim = {
      id: orderIntakeClaimId('o-1'),
      orderId: 'o-1',
      docType: 'intake',
      idempotencyKey: 'k-1',
      fingerprint,
      response: {
        status: 202,
        headers: { 'Content-Type': 'application/json' },
        body: { orderId: 'o-1', status: 'accepted', messageId: 'o-1~winner', acceptedAt: '2026-12-01T09:59:59.000Z' },
      },
      acceptedAt: '2026-12-01T09:59:59.000Z',
    };
    await t.memory.commit('o-1', [create(winner)]);
    gate.open();

    const answer = await submitted;

    expect(answer).toEqual({ ...winner.response, headers: { ...winner.response.headers, 'Idempotent-Replayed': 'true' } });
    expect(intake.log.lines.map((l) => l.record.outcome)).toEqual(['duplicate']);
  });

  it("lets an error other than the store's unavailability through, even when the batch was applied", async () => {
    const t = setUp();
    const store: DocumentStore = {
      read: (pk, id) => t.store.read(pk, id),
      find: (query) => t.store.find(query),
      commit: async (pk, operations) => {
        const result = await t.store.commit(pk, operations);
        if (pk === 'o-1') throw new Error('a bug after the batch');
        return result;
      },
    };

    await expect(intakeOn(store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')))).rejects.toThrow('a bug after the batch');
  });

  it("logs the batch's own failure as the reason for the 503 when the claim cannot be read back either", async () => {
    const t = setUp();
    t.store.loseClaimBatchAnswerOnce = true;
    t.store.failReadsAfterClaimBatch = [orderIntakeClaimId('o-1')];
    const intake = intakeOn(t.store, t.clock);

    const unknown = await intake.submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(unknown.status).toBe(503);
    expect(intake.log.lines.map((l) => [l.record.outcome, l.record.reason])).toEqual([
      ['unavailable', "the store's answer to the claim batch was lost (injected)"],
    ]);
  });
});

describe('completing the key record', () => {
  it("lets an error other than the store's unavailability through", async () => {
    const t = setUp();
    const store: DocumentStore = {
      read: (pk, id) => t.store.read(pk, id),
      find: (query) => t.store.find(query),
      commit: (pk, operations) =>
        operations.some((op) => (op.document as { state?: string }).state === 'completed')
          ? Promise.reject(new Error('not a store outage'))
          : t.store.commit(pk, operations),
    };

    await expect(intakeOn(store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')))).rejects.toThrow('not a store outage');
  });

  it('tries MAX_CONCURRENCY_ATTEMPTS times against writers that keep winning, then answers all the same', async () => {
    const t = setUp();
    const store = new AnsweringStore(t.memory);
    store.answerCommit(firstIs('replace', 'intake-key'), { kind: 'lost-race', operationIndex: 0 }, 1_000);

    const answer = await intakeOn(store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(answer.status).toBe(202);
    expect(store.answered).toBe(intakeSettings.maxConcurrencyAttempts);
    expect(await keyRecordOf(t.memory, 'k-1')).toMatchObject({ state: 'in-progress' });
  });

  it('leaves a record another copy completed first as that copy wrote it', async () => {
    const t = setUp();
    const firstGate = new Gate();
    t.store.holdBeforeCompletion = firstGate;
    const first = intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    await firstGate.reached();
    const secondStore = t.store.sibling();
    const secondGate = new Gate();
    secondStore.holdBeforeCompletion = secondGate;
    const second = intakeOn(secondStore, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    await secondGate.reached();
    firstGate.open();
    const answer = await first;
    const completed = await keyRecordOf(t.memory, 'k-1');
    expect(completed).toMatchObject({ state: 'completed', response: answer });
    t.clock.advance(1_000);

    secondGate.open();
    expect((await second).status).toBe(202);

    expect(await keyRecordOf(t.memory, 'k-1')).toEqual(completed);
    expect(await t.memory.read(intakeKeyRecordId('k-1'), intakeKeyRecordId('k-1'))).toBeDefined();
  });
});
