import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import { acceptOrderOnce, intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId, readOrderRequest, sharedCaller } from '../../../src/intake/index.js';
import type { CallerOrderRequest, IntakeKeyRecord } from '../../../src/intake/index.js';
import { orderRequest } from '../../support/intakeHarness.js';
import { InterleavingStore, touches } from '../../support/interleavingStore.js';
import { orderPlaced } from '../../support/orderMessages.js';

// A key's record lives INTAKE_KEY_RETENTION_SECONDS from its last write. When it runs out while a
// request under the key is still being handled, another request may create the key's record again
// (the key is free once its retention ends): that record is the other request's, and only the other
// request may complete it. Every schedule is set up on cue: the other request runs exactly between
// two of this one's store calls.
const startMs = Date.parse('2026-12-01T10:00:00Z');
const retentionSeconds = 120;
const leaseSeconds = 10;

function setUp() {
  let nowMs = startMs;
  const memory = new InMemoryDocumentStore(() => nowMs);
  const store = new InterleavingStore(memory);
  const ctx = {
    store,
    now: () => new Date(nowMs),
    ordersQueueName: 'orders',
    keyRetentionSeconds: retentionSeconds,
    leaseSeconds,
    maxConcurrencyAttempts: 5,
    callerIdentity: 'shared' as const,
  };
  const keyRecord = async (key: string) => (await memory.read<IntakeKeyRecord>(intakeKeyRecordId(key), intakeKeyRecordId(key)))?.document;
  const outboxEntry = (orderId: string) => memory.read(orderId, orderPlacedOutboxId(orderId));
  return { memory, store, ctx, keyRecord, outboxEntry, advance: (seconds: number) => (nowMs += seconds * 1000) };
}

async function requestFor(key: string, orderId: string): Promise<CallerOrderRequest> {
  const read = await readOrderRequest(orderRequest(key, orderPlaced(orderId)), 65_536);
  if (!('order' in read)) throw new Error(`not a valid request: ${JSON.stringify(read.body)}`);
  return { ...read, caller: sharedCaller };
}

/** Another request under the key, whose process dies before its claim batch: its record stays in progress, its lease running. */
async function diesBeforeItsBatch(t: ReturnType<typeof setUp>, request: CallerOrderRequest, owner: string): Promise<void> {
  const dying: DocumentStore = {
    read: (pk, id) => t.memory.read(pk, id),
    find: (query) => t.memory.find(query),
    commit: (pk, ops) => (touches('intake')(pk, ops) ? Promise.reject(new Error('the process died before its claim batch')) : t.memory.commit(pk, ops)),
  };
  await expect(acceptOrderOnce(request, owner, { ...t.ctx, store: dying })).rejects.toThrow('died before its claim batch');
}

describe("a key's record created again by another request while the first request under the key is still handled", () => {
  it("is not completed with the first request's answer: the other request's retry gets its own order accepted, not a 202 naming the first order", async () => {
    const t = setUp();
    const first = await requestFor('k-1', 'o-1');
    const other = await requestFor('k-1', 'o-2');
    // The first request is slow: by the time it sends its claim batch, its key record has run out, and
    // the other request has created the key's record again and died before its own batch.
    t.store.beforeCommit(
      (pk, ops) => pk === 'o-1' && touches('intake')(pk, ops),
      async () => {
        t.advance(retentionSeconds);
        expect(await t.keyRecord('k-1')).toBeUndefined();
        await diesBeforeItsBatch(t, other, 'other');
      },
    );

    const answer = await acceptOrderOnce(first, 'first', t.ctx);

    expect(answer).toMatchObject({ outcome: 'created', response: { status: 202, body: { orderId: 'o-1' } } });
    expect(await t.keyRecord('k-1')).toMatchObject({ fingerprint: other.fingerprint, owner: 'other', state: 'in-progress' });
    expect(await t.keyRecord('k-1')).not.toHaveProperty('response');
    // The other request's client retries once its lease has ended: its order is accepted, once.
    t.advance(leaseSeconds + 1);
    const retry = await acceptOrderOnce(other, 'other-retry', t.ctx);
    expect(retry).toMatchObject({ outcome: 'created', response: { status: 202, body: { orderId: 'o-2' } } });
    expect(await t.outboxEntry('o-2')).toBeDefined();
  });

  it("is not completed with the answer a retry of the first request read from its claim, when the key's record ran out and was created again between its reads", async () => {
    const t = setUp();
    const first = await requestFor('k-1', 'o-1');
    const other = await requestFor('k-1', 'o-2');
    // The first request's claim batch commits and its process dies before it completes the key record.
    const dyingAfterBatch: DocumentStore = {
      read: (pk, id) => t.memory.read(pk, id),
      find: (query) => t.memory.find(query),
      commit: async (pk, ops) => {
        const result = await t.memory.commit(pk, ops);
        if (touches('intake')(pk, ops)) throw new Error('the process died after its claim batch');
        return result;
      },
    };
    await expect(acceptOrderOnce(first, 'first', { ...t.ctx, store: dyingAfterBatch })).rejects.toThrow('died after its claim batch');
    // A retry reads the record (in progress, its own request), then the claim; just before that read the
    // record's retention ends and the other request creates the key's record again, dying before its batch.
    t.advance(retentionSeconds - 1);
    t.store.beforeRead(
      (_pk, id) => id === orderIntakeClaimId('o-1'),
      async () => {
        t.advance(1);
        await diesBeforeItsBatch(t, other, 'other');
      },
    );

    const retry = await acceptOrderOnce(first, 'first-retry', t.ctx);

    expect(retry).toMatchObject({ outcome: 'duplicate', response: { status: 202, body: { orderId: 'o-1' } } });
    expect(await t.keyRecord('k-1')).toMatchObject({ fingerprint: other.fingerprint, owner: 'other', state: 'in-progress' });
    t.advance(leaseSeconds + 1);
    const otherRetry = await acceptOrderOnce(other, 'other-retry', t.ctx);
    expect(otherRetry).toMatchObject({ outcome: 'created', response: { status: 202, body: { orderId: 'o-2' } } });
    expect(await t.outboxEntry('o-2')).toBeDefined();
  });
});

describe('a retry of an accepted request after its key, its record run out, was used again for another order', () => {
  it("replays the stored 202 from the order's claim, as INTAKE_KEY_RETENTION_SECONDS promises, not a 422; the other order's record is left as it is", async () => {
    const t = setUp();
    const first = await requestFor('k-1', 'o-1');
    const accepted = await acceptOrderOnce(first, 'first', t.ctx);
    t.advance(retentionSeconds);
    // Once the retention has run out the key is free: another request uses it for another order.
    expect(await acceptOrderOnce(await requestFor('k-1', 'o-2'), 'other', t.ctx)).toMatchObject({ outcome: 'created', response: { status: 202 } });
    const otherRecord = await t.keyRecord('k-1');

    const retry = await acceptOrderOnce(first, 'late-retry', t.ctx);

    expect(retry).toEqual({
      outcome: 'duplicate',
      response: { ...accepted.response, headers: { ...accepted.response.headers, 'Idempotent-Replayed': 'true' } },
    });
    expect(await t.keyRecord('k-1')).toEqual(otherRecord);
    expect(t.memory.list('o-1').filter((d) => (d as { docType?: string }).docType === 'outbox')).toHaveLength(1);
  });

  it("still answers 422 to another body under the key when the order's claim is not that request's", async () => {
    const t = setUp();
    await acceptOrderOnce(await requestFor('k-1', 'o-1'), 'first', t.ctx);

    const reused = await acceptOrderOnce(await requestFor('k-1', 'o-2'), 'other', t.ctx);

    expect(reused).toMatchObject({ outcome: 'conflict', response: { status: 422 } });
    expect(await t.outboxEntry('o-2')).toBeUndefined();
  });
});
