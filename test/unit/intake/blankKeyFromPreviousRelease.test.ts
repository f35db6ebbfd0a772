import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, TransientStoreError } from '../../../src/idempotency/index.js';
import type { DocumentStore, StoredDocument } from '../../../src/idempotency/index.js';
import { acceptOrderOnce, intakeKeyRecordId, orderIntakeClaimId, sharedCaller } from '../../../src/intake/index.js';
import type { IntakeKeyRecord } from '../../../src/intake/index.js';
import { fingerprintPayload } from '../../../src/idempotency/index.js';
import { intakeOn, intakeSettings, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// The previous release took an Idempotency-Key sf-string of spaces (`"   "`) as a key; this one
// refuses it (a blank key every careless client would share). A client whose request the previous
// release accepted under it, retrying after the deploy, must get its 202 again, not a 400 that says
// its order failed: the key's records outlive the deploy. Nothing new is ever accepted under it.
const blank = '   ';
const withBlankKey = (orderId: string) => orderRequest(undefined, orderPlaced(orderId), { 'Idempotency-Key': `"${blank}"` });

/** What the previous release did with the request: the same three steps, under the blank key. */
async function acceptedByPreviousRelease(store: DocumentStore, clock: TestClock, orderId: string): Promise<void> {
  const order = orderPlaced(orderId);
  const request = { idempotencyKey: blank, order, fingerprint: fingerprintPayload('OrderPlaced', order), caller: sharedCaller };
  const result = await acceptOrderOnce(request, 'previous-release', { ...intakeSettings, store, now: clock.now });
  expect(result.response.status).toBe(202);
}

/** Every document the intake writes, with its etag: a write shows as a change. */
const everything = async (store: DocumentStore) => (await Promise.all(['intake-key', 'intake', 'outbox'].map((docType) => store.find({ docType })))).flat();

/** A store whose completion of a key record fails: the previous release's process died after its claim batch. */
function diesBeforeCompletion(store: DocumentStore): DocumentStore {
  return {
    read: (pk, id) => store.read(pk, id),
    find: (query) => store.find(query),
    commit: (pk, ops) =>
      ops.some((op) => (op.document as Partial<IntakeKeyRecord>).state === 'completed')
        ? Promise.reject(new TransientStoreError('the process died before completing the key record'))
        : store.commit(pk, ops),
  };
}

describe('an Idempotency-Key of spaces, which the previous release accepted', () => {
  it("answers a retry of the request it accepted with that release's 202, writing nothing", async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    await acceptedByPreviousRelease(store, clock, 'o-1');
    const before = await everything(store);
    clock.advance(60_000);

    const retried = await intakeOn(store, clock).submit(withBlankKey('o-1'));

    expect(retried).toMatchObject({ status: 202, headers: { 'Idempotent-Replayed': 'true' }, body: { orderId: 'o-1' } });
    expect(await everything(store)).toEqual(before);
  });

  it("answers from the order's claim when that release died before it completed the key record", async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    await acceptedByPreviousRelease(diesBeforeCompletion(store), clock, 'o-1');
    const id = intakeKeyRecordId(blank);
    expect((await store.read<IntakeKeyRecord>(id, id))?.document.state).toBe('in-progress');
    expect(await store.read('o-1', orderIntakeClaimId('o-1'))).toBeDefined();
    const before = await everything(store);

    const retried = await intakeOn(store, clock).submit(withBlankKey('o-1'));

    expect(retried).toMatchObject({ status: 202, headers: { 'Idempotent-Replayed': 'true' }, body: { orderId: 'o-1' } });
    expect(await everything(store)).toEqual(before);
  });

  it('refuses another order under the key with 400, as it refuses the key alone, and writes nothing', async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    await acceptedByPreviousRelease(store, clock, 'o-1');
    const before = await everything(store);
    const intake = intakeOn(store, clock);

    const other = await intake.submit(withBlankKey('o-2'));

    expect(other).toMatchObject({
      status: 400,
      body: {
        type: 'urn:idempotent-order-consumer:problem:idempotency-key-malformed',
        detail: expect.stringContaining('an sf-string of spaces only'),
      },
    });
    expect(await everything(store)).toEqual(before);
    expect(intake.log.lines.at(-1)?.record).toMatchObject({ outcome: 'refused', status: 400, reason: 'idempotency-key-malformed' });
  });

  it('refuses the key with 400 when nothing was stored under it, writing nothing', async () => {
    const store = new InMemoryDocumentStore();
    const refused = await intakeOn(store, new TestClock()).submit(withBlankKey('o-1'));
    expect(refused).toMatchObject({ status: 400, body: { type: 'urn:idempotent-order-consumer:problem:idempotency-key-malformed' } });
    expect(await everything(store)).toEqual([]);
  });

  it('answers 503 when the store cannot be read, so that the client retries rather than take its order for refused', async () => {
    const unreadable: DocumentStore = {
      read: () => Promise.reject(new TransientStoreError('the store answered 503 (injected)')),
      find: () => Promise.resolve([]),
      commit: () => Promise.reject(new Error('nothing is written under a refused key')),
    };
    expect(await intakeOn(unreadable, new TestClock()).submit(withBlankKey('o-1'))).toMatchObject({ status: 503 });
  });

  it('answers 409 while an instance of that release still handles the request (before its claim batch), and 400 once its lease ran out', async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    const order = orderPlaced('o-1');
    const request = { idempotencyKey: blank, order, fingerprint: fingerprintPayload('OrderPlaced', order), caller: sharedCaller };
    const stalled: DocumentStore = {
      read: (pk, id) => store.read(pk, id),
      find: (query) => store.find(query),
      commit: (pk, ops) =>
        ops.some((op) => (op.document as { docType?: string }).docType === 'intake') ? new Promise(() => undefined) : store.commit(pk, ops),
    };
    void acceptOrderOnce(request, 'previous-release', { ...intakeSettings, store: stalled, now: clock.now });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const intake = intakeOn(store, clock);

    expect(await intake.submit(withBlankKey('o-1'))).toMatchObject({
      status: 409,
      body: { type: 'urn:idempotent-order-consumer:problem:request-in-progress' },
    });
    clock.advance(intakeSettings.leaseSeconds * 1000);
    expect(await intake.submit(withBlankKey('o-1'))).toMatchObject({ status: 400 });
  });

  // An instance of the previous release takes over the key's expired record (a client's concurrent
  // retry reached it) between this release's read of the record and its read of the claim, and
  // commits the claim after both: the record read saw no live owner, the claim read no claim, and
  // the request was refused with 400 while it was being accepted (202 a moment later). Read the
  // other way round (claim, then record), the takeover is seen as a live lease: 409, ask again.
  it('never refuses a request that an instance of that release takes over between the two reads', async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    const order = orderPlaced('o-1');
    const request = { idempotencyKey: blank, order, fingerprint: fingerprintPayload('OrderPlaced', order), caller: sharedCaller };
    const isClaimBatch = (ops: readonly { document: unknown }[]) => ops.some((op) => (op.document as { docType?: string }).docType === 'intake');
    // The first instance dies before its claim batch: the record stays in progress, its lease runs out.
    const dies: DocumentStore = {
      ...store,
      read: (pk, id) => store.read(pk, id),
      find: (q) => store.find(q),
      commit: (pk, ops) => (isClaimBatch(ops) ? Promise.reject(new TransientStoreError('died')) : store.commit(pk, ops)),
    };
    await expect(acceptOrderOnce(request, 'previous-release-1', { ...intakeSettings, store: dies, now: clock.now })).rejects.toThrow('died');
    clock.advance(intakeSettings.leaseSeconds * 1000 + 1000);

    let atClaimBatch!: () => void;
    const tookOver = new Promise<void>((resolve) => (atClaimBatch = resolve));
    let letClaim!: () => void;
    const claimAllowed = new Promise<void>((resolve) => (letClaim = resolve));
    const held: DocumentStore = {
      read: (pk, id) => store.read(pk, id),
      find: (q) => store.find(q),
      commit: async (pk, ops) => {
        if (isClaimBatch(ops)) {
          atClaimBatch();
          await claimAllowed;
        }
        return store.commit(pk, ops);
      },
    };
    let other: Promise<unknown> | undefined;
    let reads = 0;
    const gated: DocumentStore = {
      read: async <D extends StoredDocument>(pk: string, id: string) => {
        const found = await store.read<D>(pk, id);
        if (++reads === 1) {
          other = acceptOrderOnce(request, 'previous-release-2', { ...intakeSettings, store: held, now: clock.now });
          await tookOver;
        }
        return found;
      },
      find: (q) => store.find(q),
      commit: () => Promise.reject(new Error('nothing is written under a refused key')),
    };

    const answer = await intakeOn(gated, clock).submit(withBlankKey('o-1'));
    letClaim();
    expect(await other).toMatchObject({ outcome: 'created', response: { status: 202 } });

    expect(answer).toMatchObject({ status: 409, body: { type: 'urn:idempotent-order-consumer:problem:request-in-progress' } });
    expect(await intakeOn(store, clock).submit(withBlankKey('o-1'))).toMatchObject({ status: 202, headers: { 'Idempotent-Replayed': 'true' } });
  });

  // INTAKE_CALLER_IDENTITY=entra: the previous release kept each caller's keys apart; another caller
  // sending the same body under the same blank key gets neither that caller's 202 nor its claim's.
  it("gives another caller neither the key record's answer nor the claim's, and writes nothing", async () => {
    const clock = new TestClock();
    const store = new InMemoryDocumentStore(() => clock.now().getTime());
    const order = orderPlaced('o-1');
    const callerA = { kind: 'entra', objectId: 'caller-a' } as const;
    const request = { idempotencyKey: blank, order, fingerprint: fingerprintPayload('OrderPlaced', order), caller: callerA };
    expect((await acceptOrderOnce(request, 'previous-release', { ...intakeSettings, callerIdentity: 'entra', store, now: clock.now })).response.status).toBe(
      202,
    );
    const before = await everything(store);
    const intake = intakeOn(store, clock, undefined, 'entra');
    const as = (objectId: string) => orderRequest(undefined, order, { 'Idempotency-Key': `"${blank}"`, 'x-ms-client-principal-id': objectId });

    expect(await intake.submit(as('caller-b'))).toMatchObject({
      status: 400,
      body: { type: 'urn:idempotent-order-consumer:problem:idempotency-key-malformed' },
    });
    expect(await intake.submit(as('caller-a'))).toMatchObject({ status: 202, headers: { 'Idempotent-Replayed': 'true' } });
    expect(await everything(store)).toEqual(before);
  });
});
