import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import { intakeKeyRecordId, orderIntakeClaimId } from '../../../src/intake/index.js';
import type { IntakeKeyRecord, OrderIntakeClaim } from '../../../src/intake/index.js';
import { newOrderDocument } from '../../../src/orders/documents.js';
import { intakeOn, keyRecordOf, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// INTAKE_CALLER_IDENTITY=entra: a key is looked up in its principal's scope, an order belongs to
// the principal that submitted it, and no answer tells one principal anything of another's.
const alice = { kind: 'entra', objectId: 'aaaaaaaa-0000-0000-0000-000000000001' } as const;
const bob = { kind: 'entra', objectId: 'bbbbbbbb-0000-0000-0000-000000000002' } as const;
const as = (caller: { objectId: string }) => ({ 'X-MS-CLIENT-PRINCIPAL-ID': caller.objectId });

function entraIntake() {
  const store = new InMemoryDocumentStore(() => Date.parse('2026-12-01T10:00:00Z'));
  return { store, ...intakeOn(store, new TestClock(), 64 * 1024, 'entra') };
}

describe('keys and orders scoped to the Entra ID principal', () => {
  it("stores each principal's key under its own id, with the caller, and the shared scope's id as earlier releases wrote it", () => {
    expect(intakeKeyRecordId('abc')).toBe('intake-key|abc');
    expect(intakeKeyRecordId('abc', { kind: 'shared' })).toBe('intake-key|abc');
    expect(intakeKeyRecordId('abc', alice)).toBe('intake-key|entra:aaaaaaaa-0000-0000-0000-000000000001|abc');
    expect(intakeKeyRecordId('a|b', { kind: 'entra', objectId: 'x/y' })).toBe('intake-key|entra:x%2Fy|a%7Cb');
    // A key of 255 characters and a principal id of 128 still make an id Cosmos takes: hashed, namespace kept.
    expect(intakeKeyRecordId('k'.repeat(255), { kind: 'entra', objectId: 'p'.repeat(128) })).toMatch(/^intake-key\|\*[0-9a-f]{64}$/);
    expect(intakeKeyRecordId('k'.repeat(255), { kind: 'entra', objectId: 'p'.repeat(128) })).not.toBe(intakeKeyRecordId('k'.repeat(255)));
  });

  it('answers two principals sharing a key each for their own order, and replays to each its own', async () => {
    const { store, submit } = entraIntake();
    const first = await submit(orderRequest('k-1', orderPlaced('o-alice'), as(alice)));
    const second = await submit(orderRequest('k-1', orderPlaced('o-bob'), as(bob)));
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(await submit(orderRequest('k-1', orderPlaced('o-alice'), as(alice)))).toMatchObject({ status: 202, body: first.body });
    expect(await submit(orderRequest('k-1', orderPlaced('o-bob'), as(bob)))).toMatchObject({ status: 202, body: second.body });
    expect(JSON.stringify(second)).not.toContain('o-alice');
    expect(await keyRecordOf(store, 'k-1', alice)).toMatchObject({ caller: `entra:${alice.objectId}`, requestOrderId: 'o-alice' });
    expect((await store.read<OrderIntakeClaim>('o-bob', orderIntakeClaimId('o-bob')))?.document.caller).toBe(`entra:${bob.objectId}`);
  });

  it("answers another principal's order id, with its key and body or its own, as an id taken outside the intake: one 409 naming nothing", async () => {
    const { store, submit } = entraIntake();
    const accepted = await submit(orderRequest('k-1', orderPlaced('o-alice'), as(alice)));
    const sameRequest = await submit(orderRequest('k-1', orderPlaced('o-alice'), as(bob)));
    const ownKey = await submit(orderRequest('k-bob', orderPlaced('o-alice', { customerId: 'c-bob' }), as(bob)));
    await store.commit('o-queue', [
      create(newOrderDocument(orderPlaced('o-queue'), { messageId: 'm-queue', dedupKey: 'm-queue', fingerprint: 'f', processedAt: '2026-12-01T09:00:00Z' })),
    ]);
    const placedOnQueue = await submit(orderRequest('k-bob-2', orderPlaced('o-queue'), as(bob)));
    for (const answer of [sameRequest, ownKey]) {
      expect(answer).toMatchObject({ status: 409, body: { type: 'urn:idempotent-order-consumer:problem:order-exists', title: 'The order id is taken' } });
      expect(JSON.stringify(answer)).not.toMatch(/o-alice|k-1|acceptedAt|messageId/);
    }
    expect(sameRequest).toEqual(ownKey);
    expect(placedOnQueue).toEqual(ownKey);
    expect(accepted.status).toBe(202);
  });

  it('tells the owner of an order submitted under another of its keys which order, and no one else', async () => {
    const { submit } = entraIntake();
    await submit(orderRequest('k-1', orderPlaced('o-alice'), as(alice)));
    const again = await submit(orderRequest('k-2', orderPlaced('o-alice'), as(alice)));
    expect(again).toMatchObject({ status: 409, body: { title: 'The order exists', orderId: 'o-alice' } });
  });

  it('does not hand a claim of the shared scope (an earlier release, or before entra was set) to a principal', async () => {
    const { store, submit } = entraIntake();
    const shared = intakeOn(store, new TestClock());
    const accepted = await shared.submit(orderRequest('k-1', orderPlaced('o-1')));
    expect((await store.read<OrderIntakeClaim>('o-1', orderIntakeClaimId('o-1')))?.document).not.toHaveProperty('caller');
    expect((await store.read<IntakeKeyRecord>(intakeKeyRecordId('k-1'), intakeKeyRecordId('k-1')))?.document).not.toHaveProperty('caller');
    const asAlice = await submit(orderRequest('k-1', orderPlaced('o-1'), as(alice)));
    expect(asAlice).toMatchObject({ status: 409, body: { title: 'The order id is taken' } });
    expect(JSON.stringify(asAlice)).not.toContain(String((accepted.body as { acceptedAt: string }).acceptedAt));
  });

  it('gives one of two principals racing for one order id the order, and the other the 409 that names nothing', async () => {
    const store = new InMemoryDocumentStore(() => Date.parse('2026-12-01T10:00:00Z'));
    let claimBatches = 0;
    const counting = {
      read: store.read.bind(store),
      find: store.find.bind(store),
      commit: (pk: string, ops: Parameters<typeof store.commit>[1]) => {
        if (ops.some((op) => (op.document as { docType?: string }).docType === 'intake')) claimBatches += 1;
        return store.commit(pk, ops);
      },
    };
    const { submit } = intakeOn(counting, new TestClock(), 64 * 1024, 'entra');
    const [first, second] = await Promise.all([
      submit(orderRequest('k-a', orderPlaced('o-race'), as(alice))),
      submit(orderRequest('k-b', orderPlaced('o-race', { customerId: 'c-bob' }), as(bob))),
    ]);
    expect([first.status, second.status].sort()).toEqual([202, 409]);
    const loser = first.status === 409 ? first : second;
    expect(loser).toMatchObject({ body: { title: 'The order id is taken' } });
    expect(JSON.stringify(loser)).not.toContain('o-race');
    expect(await store.find({ docType: 'outbox' })).toHaveLength(1);
    expect(claimBatches, 'both reached the claim batch: the store refused the second').toBe(2);
  });

  it('logs the caller with each request, and no caller in the shared scope', async () => {
    const { submit, log } = entraIntake();
    await submit(orderRequest('k-1', orderPlaced('o-1'), as(alice)));
    expect(log.lines.at(-1)?.record).toMatchObject({ event: 'order-request', caller: `entra:${alice.objectId}`, idempotencyKey: 'k-1', status: 202 });
    const shared = intakeOn(new InMemoryDocumentStore(), new TestClock());
    await shared.submit(orderRequest('k-1', orderPlaced('o-1'), as(alice)));
    expect(shared.log.lines.at(-1)?.record).not.toHaveProperty('caller');
  });

  it('refuses a request without a principal with 401, before reading its body, writing nothing', async () => {
    const { store, submit } = entraIntake();
    const refused = await submit(orderRequest('k-1', 'not even json'));
    expect(refused).toMatchObject({ status: 401, body: { type: 'urn:idempotent-order-consumer:problem:caller-unauthenticated' } });
    expect(await store.find({ docType: 'intake-key' })).toEqual([]);
  });
});
