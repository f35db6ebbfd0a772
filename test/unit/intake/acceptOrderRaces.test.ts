import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, TransientStoreError, create, replace } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import {
  accepted,
  acceptOrderOnce,
  intakeKeyRecordId,
  orderIntakeClaimId,
  orderPlacedOutboxId,
  readOrderRequest,
  releaseKey,
  sharedCaller,
} from '../../../src/intake/index.js';
import type { CallerOrderRequest, IntakeKeyRecord, OrderIntakeClaim } from '../../../src/intake/index.js';
import { newOutboxDocument, orderIntakeSource } from '../../../src/outbox/index.js';
import type { OutboxDocument } from '../../../src/outbox/index.js';
import { newOrderDocument } from '../../../src/orders/documents.js';
import { orderRequest } from '../../support/intakeHarness.js';
import { InterleavingStore, touches } from '../../support/interleavingStore.js';
import { orderPlaced } from '../../support/orderMessages.js';

// The intake's decisions over the in-memory store, with the other request's step put exactly
// between this one's read and its write: every race on cue, none left to timing.
const startMs = Date.parse('2026-12-01T10:00:00Z');

function intake(maxConcurrencyAttempts = 5) {
  let nowMs = startMs;
  const memory = new InMemoryDocumentStore(() => nowMs);
  const store = new InterleavingStore(memory);
  const ctx = {
    store,
    now: () => new Date(nowMs),
    ordersQueueName: 'orders',
    keyRetentionSeconds: 172_800,
    leaseSeconds: 10,
    maxConcurrencyAttempts,
    callerIdentity: 'shared' as const,
  };
  const keyId = (key: string) => intakeKeyRecordId(key);
  const keyRecord = async (key: string) => (await memory.read<IntakeKeyRecord>(keyId(key), keyId(key)))?.document;
  /** Another writer changes the key's record (its etag moves), with whatever it changes. */
  const rewriteKeyRecord = async (key: string, change: (r: IntakeKeyRecord) => IntakeKeyRecord) => {
    const current = await memory.read<IntakeKeyRecord>(keyId(key), keyId(key));
    if (!current) throw new Error(`no record for key ${key}`);
    expect((await memory.commit(keyId(key), [replace(change(current.document), current.etag)])).kind).toBe('committed');
  };
  return { memory, store, ctx, keyRecord, rewriteKeyRecord, advance: (seconds: number) => (nowMs += seconds * 1000) };
}

async function requestFor(key: string, orderId: string): Promise<CallerOrderRequest> {
  const read = await readOrderRequest(orderRequest(key, orderPlaced(orderId)), 65_536);
  if (!('order' in read)) throw new Error(`not a valid request: ${JSON.stringify(read.body)}`);
  return { ...read, caller: sharedCaller };
}

/** A key record as a request that died right after writing it leaves it: in progress, its lease running from now. */
async function leftInProgress(t: ReturnType<typeof intake>, request: CallerOrderRequest, owner: string) {
  const dying = {
    read: t.memory.read.bind(t.memory),
    find: t.memory.find.bind(t.memory),
    commit: (pk: string, ops: readonly { kind: 'create' | 'replace'; document: unknown }[]) =>
      touches('intake')(pk, ops as never) ? Promise.reject(new Error('the process died before its claim batch')) : t.memory.commit(pk, ops as never),
  };
  await expect(acceptOrderOnce(request, owner, { ...t.ctx, store: dying })).rejects.toThrow('died before its claim batch');
  expect(await t.keyRecord(request.idempotencyKey)).toMatchObject({ state: 'in-progress', owner });
}

const isKeyWrite = (owner?: string) => (_pk: string, ops: readonly { document: unknown }[]) =>
  ops.some((op) => (op.document as IntakeKeyRecord).docType === 'intake-key' && (owner === undefined || (op.document as IntakeKeyRecord).owner === owner));

describe('two copies of one request', () => {
  it("answers 409 in progress to the copy whose key record lost to another copy's, which is still being handled", async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    t.store.beforeCommit(isKeyWrite('copy-b'), () => leftInProgress(t, request, 'copy-a'));

    const result = await acceptOrderOnce(request, 'copy-b', t.ctx);

    expect(result).toMatchObject({ outcome: 'retry', response: { status: 409, headers: { 'Retry-After': '1' } } });
    expect(await t.memory.read('o-1', orderPlacedOutboxId('o-1'))).toBeUndefined();
    expect(await t.keyRecord('k-1')).toMatchObject({ owner: 'copy-a', state: 'in-progress' });
  });

  it('creates the key record again when the one its create met (409) is gone by the time it is read: accepted once, in the usual round trips', async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    t.store.beforeCommit(isKeyWrite('copy-b'), async () => {
      await leftInProgress(t, request, 'copy-a');
      // Between the 409 and the read, copy-a's record runs out (its retention ends).
      t.store.beforeRead(
        (_pk, id) => id === intakeKeyRecordId('k-1'),
        async () => t.advance(t.ctx.keyRetentionSeconds),
      );
    });
    const [readsBefore, commitsBefore] = [t.store.reads, t.store.commits];

    const result = await acceptOrderOnce(request, 'copy-b', t.ctx);

    expect(result).toMatchObject({ outcome: 'created', response: { status: 202 } });
    expect(await t.keyRecord('k-1')).toMatchObject({ owner: 'copy-b', state: 'completed' });
    expect(await t.memory.read('o-1', orderPlacedOutboxId('o-1'))).toBeDefined();
    // Key: read, create (409), read (gone), read, create; then the claim and order reads, the claim batch, the completion.
    expect(
      t.store.commitLog
        .slice(commitsBefore)
        .filter((c) => isKeyWrite('copy-b')(c.partitionKey, c.operations))
        .map((c) => c.operations[0]?.kind),
    ).toEqual(['create', 'create', 'replace']);
    expect(t.store.reads - readsBefore).toBe(5);
  });

  it('lets only one of two retries take over an expired lease: the one that loses the takeover answers 409', async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    await leftInProgress(t, request, 'dead');
    t.advance(11);
    t.store.beforeCommit(isKeyWrite('retry-b'), () =>
      t.rewriteKeyRecord('k-1', (r) => ({ ...r, owner: 'retry-c', leaseExpiresAt: new Date(t.ctx.now().getTime() + 10_000).toISOString() })),
    );

    const result = await acceptOrderOnce(request, 'retry-b', t.ctx);

    expect(result).toMatchObject({ outcome: 'retry', response: { status: 409 } });
    expect(await t.memory.read('o-1', orderPlacedOutboxId('o-1'))).toBeUndefined();
    expect(await t.keyRecord('k-1')).toMatchObject({ owner: 'retry-c' });
  });

  it('reads the record again after a lost takeover, up to maxConcurrencyAttempts rounds, and takes it over once it can', async () => {
    const t = intake(2);
    const request = await requestFor('k-1', 'o-1');
    await leftInProgress(t, request, 'dead');
    t.advance(11);
    // The first takeover loses to a writer that changes nothing that matters: the lease is still expired.
    t.store.beforeCommit(isKeyWrite('retry-b'), () => t.rewriteKeyRecord('k-1', (r) => ({ ...r, attempt: r.attempt })));

    const result = await acceptOrderOnce(request, 'retry-b', t.ctx);

    expect(result).toMatchObject({ outcome: 'created', response: { status: 202 } });
    expect(await t.keyRecord('k-1')).toMatchObject({ owner: 'retry-b', attempt: 2, state: 'completed', response: { status: 202 } });
  });

  it('asks for one more retry when every round finds the record changed again', async () => {
    const t = intake(2);
    const request = await requestFor('k-1', 'o-1');
    await leftInProgress(t, request, 'dead');
    t.advance(11);
    t.store.beforeCommit(isKeyWrite('retry-b'), () => t.rewriteKeyRecord('k-1', (r) => ({ ...r })), Infinity);

    const result = await acceptOrderOnce(request, 'retry-b', t.ctx);

    expect(result).toMatchObject({ outcome: 'retry', response: { status: 409 } });
    expect(t.store.commitLog.filter((c) => isKeyWrite('retry-b')(c.partitionKey, c.operations))).toHaveLength(2);
  });
});

/** What the slow copy-a's claim batch for o-1 (key k-1) writes: its claim and its OrderPlaced entry. */
function slowCopysClaimBatch(request: CallerOrderRequest, acceptedAt: string): { claim: OrderIntakeClaim; entry: OutboxDocument } {
  const claim: OrderIntakeClaim = {
    id: orderIntakeClaimId('o-1'),
    orderId: 'o-1',
    docType: 'intake',
    idempotencyKey: 'k-1',
    fingerprint: request.fingerprint,
    response: accepted('o-1', 'o-1~copy-a', acceptedAt),
    acceptedAt,
  };
  const entry = newOutboxDocument({
    id: orderPlacedOutboxId('o-1'),
    orderId: 'o-1',
    eventType: 'OrderPlaced',
    destination: 'orders',
    body: request.order,
    createdAt: acceptedAt,
    messageId: 'o-1~copy-a',
    source: orderIntakeSource,
  });
  return { claim, entry };
}

describe("a takeover that meets the slow owner's claim (found by npm run explore -- --property intake, seed 7)", () => {
  it("answers the claim's 202, not 503, when the order read beside the claim read fails: the claim alone decides", async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    // copy-a is slow, not dead: its lease runs out, then its claim batch commits just before retry-b's takeover.
    await leftInProgress(t, request, 'copy-a');
    t.advance(11);
    const { claim, entry } = slowCopysClaimBatch(request, t.ctx.now().toISOString());
    t.store.beforeCommit(isKeyWrite('retry-b'), async () => expect((await t.memory.commit('o-1', [create(claim), create(entry)])).kind).toBe('committed'));
    const orderReadFails: DocumentStore = {
      read: (pk, id) =>
        pk === 'o-1' && id === 'o-1' ? Promise.reject(new TransientStoreError('503 reading the order (injected)', 503)) : t.store.read(pk, id),
      find: (query) => t.store.find(query),
      commit: (pk, ops) => t.store.commit(pk, ops),
    };

    const result = await acceptOrderOnce(request, 'retry-b', { ...t.ctx, store: orderReadFails });

    expect(result).toEqual({ outcome: 'duplicate', response: { ...claim.response, headers: { ...claim.response.headers, 'Idempotent-Replayed': 'true' } } });
    expect(t.memory.list('o-1').filter((d) => (d as { docType?: string }).docType === 'outbox')).toHaveLength(1);
  });

  it("answers the claim's 202, not 503, when its own claim batch is refused and the claim it then reads back is the slow owner's: that read decides, the store is not asked again (found by npm run explore -- --property intake, seed 130711543)", async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    await leftInProgress(t, request, 'copy-a');
    t.advance(11);
    const { claim, entry } = slowCopysClaimBatch(request, t.ctx.now().toISOString());
    // retry-b has taken the key over and found no claim; copy-a, slow, commits its claim batch now, and retry-b's
    // own batch is refused (429, nothing applied). Its read back finds copy-a's claim; any later read is refused too.
    t.advance(1);
    let claimReadsAfterTheBatch: number | undefined;
    const refusing: DocumentStore = {
      read: (pk, id) => {
        const isClaim = pk === 'o-1' && id === orderIntakeClaimId('o-1');
        if (isClaim && claimReadsAfterTheBatch !== undefined && (claimReadsAfterTheBatch += 1) > 1)
          return Promise.reject(new TransientStoreError('429 (injected)', 429));
        return t.store.read(pk, id);
      },
      find: (query) => t.store.find(query),
      commit: async (pk, ops) => {
        if (pk !== 'o-1') return t.store.commit(pk, ops);
        expect((await t.memory.commit('o-1', [create(claim), create(entry)])).kind).toBe('committed');
        claimReadsAfterTheBatch = 0;
        throw new TransientStoreError('429 on the claim batch (injected)', 429);
      },
    };

    const result = await acceptOrderOnce(request, 'retry-b', { ...t.ctx, store: refusing });

    expect(result).toEqual({ outcome: 'duplicate', response: { ...claim.response, headers: { ...claim.response.headers, 'Idempotent-Replayed': 'true' } } });
    expect(t.memory.list('o-1').filter((d) => (d as { docType?: string }).docType === 'outbox')).toHaveLength(1);
  });

  it.each([
    { failing: 'the claim read (whatever the order read says)', id: orderIntakeClaimId('o-1') },
    { failing: 'the order read, with no claim to decide', id: 'o-1' },
  ])('sends no claim batch and lets the store error through (a 503) when $failing fails', async ({ id }) => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    const failing: DocumentStore = {
      read: (pk, readId) =>
        pk === 'o-1' && readId === id ? Promise.reject(new TransientStoreError(`503 reading ${id} (injected)`, 503)) : t.store.read(pk, readId),
      find: (query) => t.store.find(query),
      commit: (pk, ops) => t.store.commit(pk, ops),
    };

    await expect(acceptOrderOnce(request, 'first', { ...t.ctx, store: failing })).rejects.toThrow(`503 reading ${id}`);
    expect(t.store.commitLog.filter((c) => c.partitionKey === 'o-1')).toEqual([]);
  });
});

describe('completing the key record', () => {
  it('tries again when another writer changed the record between its read and its write, and completes it', async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    const completing = (_pk: string, ops: readonly { document: unknown }[]) => ops.some((op) => (op.document as IntakeKeyRecord).state === 'completed');
    t.store.beforeCommit(completing, () => t.rewriteKeyRecord('k-1', (r) => ({ ...r })));

    const result = await acceptOrderOnce(request, 'first', t.ctx);

    expect(result.response.status).toBe(202);
    expect(await t.keyRecord('k-1')).toMatchObject({ state: 'completed', response: { status: 202 } });
    expect(t.store.commitLog.filter((c) => completing(c.partitionKey, c.operations))).toHaveLength(2);
  });

  it('leaves it be when it expired before the completion: the order claim holds the answer', async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    t.store.beforeCommit(touches('intake'), () => Promise.resolve(t.advance(172_801)));

    const result = await acceptOrderOnce(request, 'first', t.ctx);

    expect(result).toMatchObject({ outcome: 'created', response: { status: 202 } });
    expect(await t.keyRecord('k-1')).toBeUndefined();
    expect(await t.memory.read('o-1', orderPlacedOutboxId('o-1'))).toBeDefined();
  });
});

describe('the order claim', () => {
  it('replays the stored answer to a retry after the key record expired, even once the consumer has stored the order', async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    const first = await acceptOrderOnce(request, 'first', t.ctx);
    t.advance(172_801);
    const order = newOrderDocument(request.order, { messageId: 'o-1', dedupKey: 'o-1', fingerprint: 'f', processedAt: t.ctx.now().toISOString() });
    await t.memory.commit('o-1', [create(order)]);

    const late = await acceptOrderOnce(request, 'late', t.ctx);

    expect(late).toMatchObject({ outcome: 'duplicate', response: { status: 202, body: first.response.body, headers: { 'Idempotent-Replayed': 'true' } } });
  });

  it('answers 422 to a reused key when only the claim remembers it (the key record expired), naming no order', async () => {
    const t = intake();
    await acceptOrderOnce(await requestFor('k-1', 'o-1'), 'first', t.ctx);
    t.advance(172_801);
    const changed = await readOrderRequest(orderRequest('k-1', orderPlaced('o-1', { customerId: 'someone-else' })), 65_536);
    if (!('order' in changed)) throw new Error('not a valid request');

    const result = await acceptOrderOnce({ ...changed, caller: sharedCaller }, 'late', t.ctx);

    expect(result).toMatchObject({
      outcome: 'conflict',
      response: { status: 422, body: { type: 'urn:idempotent-order-consumer:problem:idempotency-key-reused' } },
    });
    expect(result.response.body).not.toHaveProperty('orderId');
  });

  it('carries the invocation trace context into the outbox entry, and no trace context field when there is none', async () => {
    const t = intake();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await acceptOrderOnce(await requestFor('k-1', 'o-1'), 'a', t.ctx, traceparent);
    await acceptOrderOnce(await requestFor('k-2', 'o-2'), 'b', t.ctx);
    const propertiesOf = async (orderId: string) =>
      (await t.memory.read<{ id: string; message: { applicationProperties: Record<string, unknown> } }>(orderId, orderPlacedOutboxId(orderId)))?.document
        .message.applicationProperties;
    expect(await propertiesOf('o-1')).toMatchObject({ 'Diagnostic-Id': traceparent });
    expect(await propertiesOf('o-2')).not.toHaveProperty('Diagnostic-Id');
  });
});

describe('releaseKey', () => {
  it('ends only its own live lease on a record in progress', async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    await leftInProgress(t, request, 'owner-a');
    const leaseBefore = (await t.keyRecord('k-1'))?.leaseExpiresAt;

    await releaseKey('k-1', sharedCaller, 'owner-b', t.ctx);
    expect((await t.keyRecord('k-1'))?.leaseExpiresAt).toBe(leaseBefore);

    await releaseKey('k-1', sharedCaller, 'owner-a', t.ctx);
    expect((await t.keyRecord('k-1'))?.leaseExpiresAt).toBe(t.ctx.now().toISOString());
  });

  it('leaves a completed record alone, and does nothing for a key it never saw', async () => {
    const t = intake();
    await acceptOrderOnce(await requestFor('k-1', 'o-1'), 'owner-a', t.ctx);
    const before = await t.keyRecord('k-1');
    await releaseKey('k-1', sharedCaller, 'owner-a', t.ctx);
    expect(await t.keyRecord('k-1')).toEqual(before);
    await expect(releaseKey('never-seen', sharedCaller, 'owner-a', t.ctx)).resolves.toBeUndefined();
    expect(t.store.commitLog.filter((c) => c.partitionKey === intakeKeyRecordId('never-seen'))).toEqual([]);
  });
});

describe('a deploy: the previous release (MessageId = the order id) and this one side by side', () => {
  /** The claim and entry as the previous release's batch wrote them, its process dead before it completed the key. */
  async function previousReleaseBatch(t: ReturnType<typeof intake>, request: CallerOrderRequest) {
    await leftInProgress(t, request, 'previous-release');
    const { orderId } = request.order;
    const acceptedAt = t.ctx.now().toISOString();
    const claim: OrderIntakeClaim = {
      id: orderIntakeClaimId(orderId),
      orderId,
      docType: 'intake',
      idempotencyKey: request.idempotencyKey,
      fingerprint: request.fingerprint,
      response: accepted(orderId, orderId, acceptedAt),
      acceptedAt,
    };
    const entry = newOutboxDocument({
      id: orderPlacedOutboxId(orderId),
      orderId,
      eventType: 'OrderPlaced',
      destination: 'orders',
      body: request.order,
      createdAt: acceptedAt,
      messageId: orderId,
      source: orderIntakeSource,
    });
    expect((await t.memory.commit(orderId, [create(claim), create(entry)])).kind).toBe('committed');
  }
  const entriesOf = (t: ReturnType<typeof intake>, orderId: string) =>
    t.memory.list(orderId).filter((d) => (d as { docType?: string }).docType === 'outbox') as OutboxDocument[];

  it("replays the previous release's answer to a retry this release serves, its MessageId the one its entry carries, and writes no second entry", async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    await previousReleaseBatch(t, request);

    const retry = await acceptOrderOnce(request, 'this-release', t.ctx);

    expect(retry).toMatchObject({ outcome: 'duplicate', response: { status: 202, body: { messageId: 'o-1' } } });
    expect(entriesOf(t, 'o-1').map((e) => e.message.messageId)).toEqual(['o-1']);
  });

  it("keeps one entry when this release takes over the previous release's expired lease: the claim decides, not the release", async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    await previousReleaseBatch(t, request);
    t.advance(11);

    expect(await acceptOrderOnce(request, 'this-release', t.ctx)).toMatchObject({ outcome: 'duplicate', response: { body: { messageId: 'o-1' } } });
    expect(await acceptOrderOnce(await requestFor('k-2', 'o-1'), 'this-release', t.ctx)).toMatchObject({ outcome: 'invalid', response: { status: 409 } });
    expect(entriesOf(t, 'o-1')).toHaveLength(1);
  });

  it("writes this release's MessageId when the previous release died before its batch, and the answer names it", async () => {
    const t = intake();
    const request = await requestFor('k-1', 'o-1');
    await leftInProgress(t, request, 'previous-release');
    t.advance(11);

    const result = await acceptOrderOnce(request, 'this-release', t.ctx);

    const [entry, ...more] = entriesOf(t, 'o-1');
    expect(more).toEqual([]);
    expect(entry?.message.messageId).toMatch(/^o-1~[0-9a-f]{32}$/);
    expect(result).toMatchObject({ outcome: 'created', response: { status: 202, body: { messageId: entry?.message.messageId } } });
  });
});
