import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, PermanentMessageError } from '../../../src/idempotency/index.js';
import type { DocumentStore, StoredDocument } from '../../../src/idempotency/index.js';
import { create } from '../../../src/idempotency/index.js';
import { findRejectionRecord, legacyRejectedMessagesPartition, rejectedMessagesPartition, rejectionDocumentId } from '../../../src/orders/index.js';
import type { RejectionDocument } from '../../../src/orders/index.js';
import { recordRejection } from '../../../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { AnsweringStore, firstIs } from '../../support/answeringStore.js';

// Where a rejection's reason is kept, by MessageId, for the operator tool; over the in-memory store.
const ctx = (store: DocumentStore, consumerName?: string) => ({
  store,
  consumerName,
  now: () => new Date('2026-12-01T10:00:00Z'),
  markerTtlSeconds: 3600,
  maxConcurrencyAttempts: 5,
  orderEventsDestination: 'order-events',
});
const delivery = (sequenceNumber: number, deliveryCount = 1, messageId = 'm-1') => envelopeFromTriggerMetadata({ messageId, sequenceNumber, deliveryCount });
const invalid = new PermanentMessageError('SchemaViolation', 'amount: must be > 0', 'k-from-error');
const conflict = (fingerprint: string): StoredDocument & Record<string, unknown> => ({
  id: `conflict|k-1|${fingerprint}`,
  orderId: 'o-1',
  docType: 'conflict',
  fingerprint,
});

describe('recordRejection', () => {
  it("keeps an invalid message's reason in #rejected-<n> of its MessageId, with the error's key when the message gave none", async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(7), { error: invalid, messageType: 'PaymentReceived', orderId: 'o-1' }, ctx(store));
    expect((await store.read<RejectionDocument>(rejectedMessagesPartition('m-1'), rejectionDocumentId('m-1')))?.document).toMatchObject({
      orderId: rejectedMessagesPartition('m-1'),
      messageId: 'm-1',
      sequenceNumber: 7,
      dedupKey: 'k-from-error',
      messageOrderId: 'o-1',
      reason: 'SchemaViolation',
      ttl: 3600,
    });
    expect(store.list('o-1')).toEqual([]);
  });

  it("keeps a conflict's record with its evidence in the order's partition, and in #rejected-<n> when the order is unknown", async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(1), { error: invalid, dedupKey: 'k-1', orderId: 'o-1', evidence: conflict('f2') }, ctx(store));
    expect(
      store
        .list('o-1')
        .map((d) => d.id)
        .sort(),
    ).toEqual(['conflict|k-1|f2', rejectionDocumentId('m-1')]);
    const loose = new InMemoryDocumentStore();
    await recordRejection(delivery(1), { error: invalid, dedupKey: 'k-1', evidence: conflict('f2') }, ctx(loose));
    expect(
      loose
        .list(rejectedMessagesPartition('m-1'))
        .map((d) => d.id)
        .sort(),
    ).toEqual(['conflict|k-1|f2', rejectionDocumentId('m-1')]);
  });

  it('spreads invalid messages over 16 partitions named by the MessageId alone, none taking more than a fair share', async () => {
    const store = new InMemoryDocumentStore();
    const ids = Array.from({ length: 1600 }, (_, i) => `flood-${i}`);
    for (const [i, id] of ids.entries()) await recordRejection(delivery(i, 1, id), { error: invalid }, ctx(store));
    const sizes = Array.from({ length: 16 }, (_, n) => store.list(`#rejected-${n}`).length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1600);
    expect(Math.max(...sizes), `partition sizes ${sizes.join(',')}`).toBeLessThan(200);
    expect(store.list(legacyRejectedMessagesPartition)).toEqual([]);
    expect(rejectedMessagesPartition('flood-1')).toBe(rejectedMessagesPartition('flood-1'));
    expect(new Set(ids.map(rejectedMessagesPartition)).size).toBe(16);
  });

  it('does not record again a redelivery whose rejection the previous release kept in #rejected', async () => {
    const store = new InMemoryDocumentStore();
    const old = {
      id: rejectionDocumentId('m-1'),
      orderId: legacyRejectedMessagesPartition,
      docType: 'rejection',
      messageId: 'm-1',
      sequenceNumber: 7,
      reason: 'SchemaViolation',
      description: 'old',
      rejectedAt: '2026-11-30T00:00:00Z',
      ttl: 3600,
    };
    await store.commit(legacyRejectedMessagesPartition, [create(old)]);
    await recordRejection(delivery(7, 2), { error: invalid }, ctx(store));
    expect(store.list(rejectedMessagesPartition('m-1'))).toEqual([]);
    // Another broker message under that MessageId (a resubmitted copy) is recorded where this release keeps them.
    await recordRejection(delivery(9, 2), { error: invalid }, ctx(store));
    expect(await findRejectionRecord(store, 'm-1', undefined)).toMatchObject({ sequenceNumber: 9, orderId: rejectedMessagesPartition('m-1') });
  });

  it('a redelivery of an invalid message this release recorded costs one point read of its own #rejected-<n>: no write, and no read of the one #rejected every flood message would share', async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(7), { error: invalid }, ctx(store));
    const calls: string[] = [];
    const counting: DocumentStore = {
      read: (partition, id) => (calls.push(`read ${partition}`), store.read(partition, id)),
      commit: (partition, operations) => (calls.push(`commit ${partition}`), store.commit(partition, operations)),
      find: (query) => (calls.push('find'), store.find(query)),
    };
    for (const count of [2, 3, 10]) await recordRejection(delivery(7, count), { error: invalid }, ctx(counting));
    expect(calls).toEqual(Array.from({ length: 3 }, () => `read ${rejectedMessagesPartition('m-1')}`));
    expect(store.list(rejectedMessagesPartition('m-1'))).toEqual([expect.objectContaining({ sequenceNumber: 7 })]);
  });

  it("records a redelivery its first delivery did not (its write lost, or another release): the previous release's #rejected read only then", async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(8, 3), { error: invalid }, ctx(store));
    expect(await findRejectionRecord(store, 'm-1', undefined)).toMatchObject({ sequenceNumber: 8, orderId: rejectedMessagesPartition('m-1') });
  });

  it('records a conflict of a message without a MessageId, though it has nothing to find it by', async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(
      envelopeFromTriggerMetadata({ sequenceNumber: 1, deliveryCount: 1 }),
      { error: invalid, orderId: 'o-1', evidence: conflict('f2') },
      ctx(store),
    );
    expect(store.list('o-1').map((d) => d.id)).toEqual(['conflict|k-1|f2']);
  });

  it('leaves the record of a redelivery as its first delivery wrote it', async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(7), { error: invalid }, ctx(store));
    await recordRejection(delivery(7, 2), { error: new PermanentMessageError('SchemaViolation', 'changed'), dedupKey: 'k-2' }, ctx(store));
    expect((await store.read<RejectionDocument>(rejectedMessagesPartition('m-1'), rejectionDocumentId('m-1')))?.document).toMatchObject({
      sequenceNumber: 7,
      description: 'amount: must be > 0',
    });
  });

  it("points the record at a resubmitted copy (another broker message under the MessageId), and records that copy's new conflict too", async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(7), { error: invalid, dedupKey: 'k-1', orderId: 'o-1', evidence: conflict('f2') }, ctx(store));
    await recordRejection(delivery(9), { error: invalid, dedupKey: 'k-1', orderId: 'o-1', evidence: conflict('f3') }, ctx(store));
    expect((await store.read<RejectionDocument>('o-1', rejectionDocumentId('m-1')))?.document).toMatchObject({
      sequenceNumber: 9,
      conflictDocumentId: 'conflict|k-1|f3',
    });
    expect(
      store
        .list('o-1')
        .map((d) => d.id)
        .sort(),
    ).toEqual(['conflict|k-1|f2', 'conflict|k-1|f3', rejectionDocumentId('m-1')]);
  });

  it('leaves the record as it is when the same broker message comes again without a delivery count', async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(7), { error: invalid }, ctx(store));
    await recordRejection(
      envelopeFromTriggerMetadata({ messageId: 'm-1', sequenceNumber: 7 }),
      { error: new PermanentMessageError('SchemaViolation', 'changed') },
      ctx(store),
    );
    expect((await store.read<RejectionDocument>(rejectedMessagesPartition('m-1'), rejectionDocumentId('m-1')))?.document).toMatchObject({
      sequenceNumber: 7,
      description: 'amount: must be > 0',
    });
  });

  it('records a resubmitted copy quietly when the record it would point at expired between the write and the read', async () => {
    const memory = new InMemoryDocumentStore();
    await recordRejection(delivery(7), { error: invalid }, ctx(memory));
    const store = new AnsweringStore(memory);
    store.emptyRead((pk) => pk === rejectedMessagesPartition('m-1'));
    await expect(recordRejection(delivery(9), { error: invalid }, ctx(store))).resolves.toBeUndefined();
  });

  it("leaves the record naming a newer copy another instance recorded just after this one's write", async () => {
    const memory = new InMemoryDocumentStore();
    let another: (() => Promise<void>) | undefined = () => recordRejection(delivery(11), { error: invalid }, ctx(memory));
    const afterEachWrite: DocumentStore = {
      read: (pk, id) => memory.read(pk, id),
      find: (query) => memory.find(query),
      async commit(pk, operations) {
        const result = await memory.commit(pk, operations);
        const next = another;
        another = undefined;
        if (result.kind === 'committed' && next) await next();
        return result;
      },
    };
    // Copy 7's record was there at the first write (a 409) and had expired by the second, which creates it.
    const store = new AnsweringStore(afterEachWrite);
    store.answerCommit(firstIs('create', 'rejection'), { kind: 'already-exists', operationIndex: 0 });
    await recordRejection(delivery(9), { error: invalid }, ctx(store));
    expect(await findRejectionRecord(memory, 'm-1', undefined)).toMatchObject({ sequenceNumber: 11 });
  });
});

describe('findRejectionRecord', () => {
  it("looks in #rejected-<n> first, then in the order's partition, under the consumer's name", async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(1, 1, 'bad'), { error: invalid }, ctx(store, 'billing'));
    await recordRejection(delivery(2, 1, 'dup'), { error: invalid, dedupKey: 'k-1', orderId: 'o-1', evidence: conflict('f2') }, ctx(store, 'billing'));
    expect(await findRejectionRecord(store, 'bad', 'o-1', 'billing')).toMatchObject({ messageId: 'bad', orderId: rejectedMessagesPartition('bad') });
    expect(await findRejectionRecord(store, 'dup', 'o-1', 'billing')).toMatchObject({ messageId: 'dup', orderId: 'o-1' });
    expect(await findRejectionRecord(store, 'dup', undefined, 'billing')).toBeUndefined();
    expect(await findRejectionRecord(store, 'dup', 'o-1')).toBeUndefined();
    expect(await findRejectionRecord(store, 'never', 'o-1', 'billing')).toBeUndefined();
  });

  it('finds with one point read a record this release wrote, and still finds one the previous release kept in #rejected', async () => {
    const store = new InMemoryDocumentStore();
    await recordRejection(delivery(1, 1, 'new'), { error: invalid }, ctx(store));
    const reads: string[] = [];
    const counting = {
      ...store,
      find: store.find.bind(store),
      commit: store.commit.bind(store),
      read: (pk: string, id: string) => (reads.push(pk), store.read(pk, id)),
    } as unknown as InMemoryDocumentStore;
    expect(await findRejectionRecord(counting, 'new', undefined)).toMatchObject({ messageId: 'new' });
    expect(reads).toEqual([rejectedMessagesPartition('new')]);
    const old = {
      id: rejectionDocumentId('old'),
      orderId: legacyRejectedMessagesPartition,
      docType: 'rejection',
      messageId: 'old',
      reason: 'InvalidJson',
      description: 'old',
      rejectedAt: '2026-11-30T00:00:00Z',
      ttl: 3600,
    };
    await store.commit(legacyRejectedMessagesPartition, [create(old)]);
    expect(await findRejectionRecord(store, 'old', undefined)).toMatchObject({ reason: 'InvalidJson', orderId: '#rejected' });
  });
});
