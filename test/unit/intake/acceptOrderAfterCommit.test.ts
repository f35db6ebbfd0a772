import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import { intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId } from '../../../src/intake/index.js';
import type { IntakeResponse, OrderIntakeClaim } from '../../../src/intake/index.js';
import { Gate, IntakeScriptedStore, ProcessKilled, intakeOn, keyRecordOf, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// Once the claim batch has committed, the order is accepted: OrderPlaced is on its way. Whatever
// fails after that (the key record's read or replace, the batch's own answer), the client is never
// told that nothing was accepted, and its retry gets the accepted answer, never a second order.
function setUp() {
  const clock = new TestClock();
  const memory = new InMemoryDocumentStore(() => clock.now().getTime());
  const store = new IntakeScriptedStore(memory);
  const outboxEntries = async (orderId: string) => ((await memory.read(orderId, orderPlacedOutboxId(orderId))) ? 1 : 0);
  const claimOf = async (orderId: string) => (await memory.read<OrderIntakeClaim>(orderId, orderIntakeClaimId(orderId)))?.document;
  return { clock, memory, store, outboxEntries, claimOf };
}

const detailOf = (response: IntakeResponse) => (response.body as { detail?: string }).detail ?? '';

describe('after the claim batch committed', () => {
  it('answers 202, not 503, when the key record cannot be read to complete it; the retry replays the same answer', async () => {
    const t = setUp();
    t.store.failReadsAfterClaimBatch = [intakeKeyRecordId('k-1')];
    const first = intakeOn(t.store, t.clock);

    const answer = await first.submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(answer).toMatchObject({ status: 202, body: { orderId: 'o-1', status: 'accepted' } });
    expect(answer.headers['Idempotent-Replayed']).toBeUndefined();
    expect(first.log.lines.map((l) => l.record.outcome)).toEqual(['created']);
    expect(await keyRecordOf(t.memory, 'k-1')).toMatchObject({ state: 'in-progress' });
    const retry = await intakeOn(t.store.sibling(), t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    expect(retry).toEqual({ ...answer, headers: { ...answer.headers, 'Idempotent-Replayed': 'true' } });
    expect(await keyRecordOf(t.memory, 'k-1')).toMatchObject({ state: 'completed', response: answer });
    expect(await t.outboxEntries('o-1')).toBe(1);
  });

  it("answers 202, not 503, when the key record's completion fails; the retry completes it and replays", async () => {
    const t = setUp();
    t.store.failCompletion = true;

    const answer = await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(answer.status).toBe(202);
    expect(await keyRecordOf(t.memory, 'k-1')).toMatchObject({ state: 'in-progress' });
    const retry = await intakeOn(t.store.sibling(), t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    expect([retry.status, retry.headers['Idempotent-Replayed'], retry.body]).toEqual([202, 'true', answer.body]);
    expect(await t.outboxEntries('o-1')).toBe(1);
  });

  it('answers a retry 202 from the claim of an earlier copy that died after its batch, when completing the record fails', async () => {
    const t = setUp();
    t.store.killAfterClaimBatch = true;
    await expect(intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')))).rejects.toBeInstanceOf(ProcessKilled);
    const retrying = t.store.sibling();
    retrying.failCompletion = true;

    const retry = await intakeOn(retrying, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));

    expect([retry.status, retry.headers['Idempotent-Replayed'], retry.body]).toEqual([202, 'true', (await t.claimOf('o-1'))?.response.body]);
    expect(await t.outboxEntries('o-1')).toBe(1);
  });

  it('answers a retry 202 from the claim after the key record expired, when completing the new record fails', async () => {
    const t = setUp();
    const first = await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    t.clock.advance(172_801_000); // the key record's ttl ends; the claim stays with the order
    const retrying = t.store.sibling();
    retrying.failCompletion = true;

    const late = await intakeOn(retrying, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(late).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect(await t.outboxEntries('o-1')).toBe(1);
  });

  it('answers 409 order-exists, as the stored state says, when completing the record of a refused key fails', async () => {
    const t = setUp();
    await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    const other = t.store.sibling();
    other.failCompletion = true;

    const refused = await intakeOn(other, t.clock).submit(orderRequest('k-2', orderPlaced('o-1')));

    expect([refused.status, (refused.body as { type: string }).type]).toEqual([409, 'urn:idempotent-order-consumer:problem:order-exists']);
    expect(await t.outboxEntries('o-1')).toBe(1);
  });
});

describe('the claim batch applied, its answer lost', () => {
  it('answers 202 from the claim it reads back, never 503 "nothing accepted", and completes the key record', async () => {
    const t = setUp();
    t.store.loseClaimBatchAnswerOnce = true;
    const first = intakeOn(t.store, t.clock);

    const answer = await first.submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(answer).toEqual({ ...(await t.claimOf('o-1'))?.response });
    expect(answer.status).toBe(202);
    expect(first.log.lines.map((l) => [l.record.outcome, l.record.status])).toEqual([['created', 202]]);
    expect(await keyRecordOf(t.memory, 'k-1')).toMatchObject({ state: 'completed', response: answer });
    expect(await t.outboxEntries('o-1')).toBe(1);
  });

  it('answers 503 without claiming nothing was accepted when the claim cannot be read back either; the retry gets the accepted answer, no second order', async () => {
    const t = setUp();
    t.store.loseClaimBatchAnswerOnce = true;
    t.store.failReadsAfterClaimBatch = [orderIntakeClaimId('o-1')];

    const unknown = await intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));

    expect([unknown.status, unknown.headers['Retry-After']]).toEqual([503, '5']);
    expect(detailOf(unknown)).not.toMatch(/nothing (was )?accepted/);
    expect(detailOf(unknown)).toContain('retry with the same Idempotency-Key and body');
    const retry = await intakeOn(t.store.sibling(), t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    expect([retry.status, retry.headers['Idempotent-Replayed'], retry.body]).toEqual([202, 'true', (await t.claimOf('o-1'))?.response.body]);
    expect(await t.outboxEntries('o-1')).toBe(1);
  });

  it("answers 409 order-exists when the claim read back is another key's: that key's batch won, this one wrote nothing", async () => {
    const t = setUp();
    const gate = new Gate();
    t.store.holdBeforeClaimBatch = gate;
    t.store.loseClaimBatchAnswerOnce = true;
    const submitted = intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));
    await gate.reached();
    // Another key's claim for o-1 lands between this request's reads and its batch, which the store then refuses.
    const claim: OrderIntakeClaim = {
      id: orderIntakeClaimId('o-1'),
      orderId: 'o-1',
      docType: 'intake',
      idempotencyKey: 'k-other',
      fingerprint: 'f',
      response: { status: 202, headers: {}, body: {} },
      acceptedAt: '2026-12-01T09:59:59.000Z',
    };
    await t.memory.commit('o-1', [create(claim)]);
    gate.open();

    const refused = await submitted;

    expect([refused.status, (refused.body as { type: string }).type]).toEqual([409, 'urn:idempotent-order-consumer:problem:order-exists']);
  });
});

describe('the claim read back after a lost answer', () => {
  it("lets an error other than the store's unavailability through, as every unexpected error is", async () => {
    const t = setUp();
    t.store.loseClaimBatchAnswerOnce = true;
    let batchSent = false;
    const store: DocumentStore = {
      read: (pk, id) => (batchSent && id === orderIntakeClaimId('o-1') ? Promise.reject(new Error('not a store outage')) : t.store.read(pk, id)),
      find: (query) => t.store.find(query),
      commit: (pk, operations) => ((batchSent ||= pk === 'o-1'), t.store.commit(pk, operations)),
    };

    await expect(intakeOn(store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')))).rejects.toThrow('not a store outage');
  });
});

describe('a 503 before anything is known', () => {
  it('never says nothing was accepted: an earlier copy of the request may have been', async () => {
    const t = setUp();
    t.store.killAfterClaimBatch = true;
    await expect(intakeOn(t.store, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')))).rejects.toBeInstanceOf(ProcessKilled);
    const retrying = t.store.sibling();
    retrying.failReads = [orderIntakeClaimId('o-1')];

    const unknown = await intakeOn(retrying, t.clock).submit(orderRequest('k-1', orderPlaced('o-1')));

    expect(unknown.status).toBe(503);
    expect(detailOf(unknown)).not.toMatch(/nothing (was )?accepted/);
    expect(await t.outboxEntries('o-1')).toBe(1);
  });
});
