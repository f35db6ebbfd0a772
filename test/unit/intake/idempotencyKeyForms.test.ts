import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create, fingerprintPayload } from '../../../src/idempotency/index.js';
import { accepted } from '../../../src/intake/index.js';
import type { IntakeKeyRecord } from '../../../src/intake/index.js';
import { intakeOn, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// A key sent bare (Stripe's clients) and the same key as the IETF draft's sf-string are one key:
// one record, found again by the id the records already stored were written under.
const withKeyHeader = (value: string) => orderRequest(undefined, orderPlaced('o-1'), { 'Idempotency-Key': value });

/** A completed key record as the intake wrote it before bare tokens were read: the id pinned, not derived. */
function storedBefore(id: string, idempotencyKey: string): IntakeKeyRecord {
  return {
    id,
    orderId: id,
    docType: 'intake-key',
    idempotencyKey,
    fingerprint: fingerprintPayload('OrderPlaced', orderPlaced('o-1')),
    requestOrderId: 'o-1',
    state: 'completed',
    owner: 'invocation-earlier',
    attempt: 1,
    leaseExpiresAt: '2026-12-01T09:00:10.000Z',
    createdAt: '2026-12-01T09:00:00.000Z',
    completedAt: '2026-12-01T09:00:00.100Z',
    response: accepted('o-1', 'o-1', '2026-12-01T09:00:00.050Z'),
    ttl: 172_800,
  };
}

describe('the Idempotency-Key in either form', () => {
  // Ids computed by the intake before this change, for quoted keys "abc", "a/b%|?#*" and 255 k's.
  const storedIds: [string, string][] = [
    ['abc', 'intake-key|abc'],
    ['a/b%|?#*', 'intake-key|a%2Fb%25%7C%3F%23%2A'],
    ['k'.repeat(255), 'intake-key|*767527047c4621915da44b8a2aa3165e70ee554e2563526df03765e8ed8d091e'],
  ];
  for (const [key, id] of storedIds) {
    it(`finds the record stored for the quoted key ${key.slice(0, 12)} under ${id.slice(0, 24)}, whether the retry sends it bare or quoted`, async () => {
      const store = new InMemoryDocumentStore(() => Date.parse('2026-12-01T10:00:00Z'));
      const record = storedBefore(id, key);
      await store.commit(id, [create(record)]);
      const { submit } = intakeOn(store, new TestClock());
      for (const header of [key, `"${key}"`]) {
        const answer = await submit(withKeyHeader(header));
        expect(answer, header).toEqual({ ...record.response, headers: { ...record.response?.headers, 'Idempotent-Replayed': 'true' } });
      }
      expect((await store.find({ docType: 'intake-key' })).map((r) => r.document.id)).toEqual([id]);
    });
  }

  it('replays to a quoted "abc" what a bare abc was answered, and the other way round: one stored record', async () => {
    const store = new InMemoryDocumentStore(() => Date.parse('2026-12-01T10:00:00Z'));
    const { submit } = intakeOn(store, new TestClock());
    const bare = await submit(withKeyHeader('abc'));
    const quoted = await submit(withKeyHeader('"abc"'));
    const bareAgain = await submit(withKeyHeader('abc'));
    expect(bare.status).toBe(202);
    expect([quoted, bareAgain]).toEqual([bare, bare].map((r) => ({ ...r, headers: { ...r.headers, 'Idempotent-Replayed': 'true' } })));
    expect((await store.find<IntakeKeyRecord>({ docType: 'intake-key' })).map((r) => [r.document.id, r.document.idempotencyKey])).toEqual([
      ['intake-key|abc', 'abc'],
    ]);
  });

  it('refuses a key with a control character with 400 and a problem that names it, writing nothing', async () => {
    const store = new InMemoryDocumentStore();
    const { submit } = intakeOn(store, new TestClock());
    const refused = await submit(withKeyHeader('ab\tc'));
    expect(refused).toMatchObject({
      status: 400,
      headers: { 'Content-Type': 'application/problem+json' },
      body: {
        type: 'urn:idempotent-order-consumer:problem:idempotency-key-malformed',
        detail: 'the Idempotency-Key holds a control character (U+0009) at position 3; a key is visible ASCII only',
      },
    });
    expect(await store.find({ docType: 'intake-key' })).toEqual([]);
  });
});
