import { describe, expect, it } from 'vitest';
import { loadStoredFormatFixtures } from '../support/storedFormatFixture.js';
import type { FixtureDelivery, StoreChanges, StoredFormatFixture } from '../support/storedFormatFixture.js';
import { answerDelivery, answerPublish, answerReconcile, answerRequest } from '../support/storedFormatReplay.js';

// During a deploy, old and new instances run side by side, and what an old release stored (markers
// live 30 days, parked items and shipment records until they are settled) is read by the new one.
// Each fixture under test/fixtures/stored-formats/<version>/ is what a release wrote, with what it
// answered when each message came again. The code at this commit must answer the same: a redelivery
// of an applied message, its delayed-retry or resubmitted copy, its outbox re-send, an HTTP retry,
// all stay duplicates (or stale, or the stored 202), with nothing written, no conflict recorded and
// no second booking. A new version folder is picked up as it is.
const fixtures = loadStoredFormatFixtures();
const named = (list: readonly StoredFormatFixture[]) => list.map((f) => [`${f.version}/${f.scenario}`, f] as const);
const settledOutcomes = ['duplicate', 'stale'];
const isConflictOrRejection = (key: string) => /\/(conflict|rejection)\|/.test(key);

function expectNothingWritten(now: StoreChanges, what: string): void {
  expect(now.created.filter(isConflictOrRejection), `${what}: a conflict or rejection recorded`).toEqual([]);
  expect(now, `${what}: documents created, changed or removed`).toEqual({ created: [], changed: [], removed: [], effects: {} });
}

describe('stored formats of earlier releases, read by this one', () => {
  it('finds the fixtures of every version folder', () => {
    expect(fixtures.map((f) => f.version)).toContain('v1');
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  describe.each(named(fixtures))('%s', (_name, fixture) => {
    const delivered = fixture.deliveries.filter((d) => d.origin !== 'not-yet-delivered');
    const arriving = fixture.deliveries.filter((d) => d.origin === 'not-yet-delivered');

    it.each(delivered.map((d) => [`${d.name} (${d.origin})`, d] as const))(
      '%s comes again: answered as the release that stored it did',
      async (_label, delivery: FixtureDelivery) => {
        const now = await answerDelivery(fixture, delivery);
        if (settledOutcomes.includes(delivery.answered.outcome)) {
          expect(settledOutcomes, `${delivery.name} was a ${delivery.answered.outcome}`).toContain(now.outcome);
          expectNothingWritten(now.store, delivery.name);
        }
        expect(now.outcome, 'a conflict stays a conflict, an invalid message stays invalid, an applied one is a duplicate').toBe(delivery.answered.outcome);
        expect(now.store, 'what the delivery wrote (nothing, for a duplicate)').toEqual(delivery.answered.store);
        expect(now.carrier.book, 'bookings at the carrier').toBe(delivery.answered.carrier.book);
      },
    );

    it.each(arriving.map((d) => [d.name, d] as const))(
      '%s, delivered after the deploy, applies what the earlier release stored',
      async (_label, delivery: FixtureDelivery) => {
        const now = await answerDelivery(fixture, delivery);
        const stored = delivery.answered.store;
        expect(now.outcome).toBe(delivery.answered.outcome);
        expect(now.store.changed, 'the documents of the earlier release it changed (parked items, the arrival gate)').toEqual(stored.changed);
        expect(now.store.removed).toEqual(stored.removed);
        for (const key of stored.changed) expect(now.store.effects[key], key).toEqual(stored.effects[key]);
        for (const key of stored.created.filter((k) => now.store.created.includes(k))) expect(now.store.effects[key], key).toEqual(stored.effects[key]);
        expect(now.store.created.length, 'documents created').toBe(stored.created.length);
        expect(now.thenRedelivered, 'every other message of the scenario, once it is applied').toEqual(delivery.answered.thenRedelivered);
        expect(now.carrier.book).toBe(delivery.answered.carrier.book);
      },
    );

    it.each(fixture.requests.map((r) => [r.name, r] as const))('%s again: the stored answer is replayed, no second order or event', async (_label, request) => {
      const now = await answerRequest(fixture, request);
      if (request.firstResponse.status < 500) expect(now.response, 'the first answer, replayed').toMatchObject(request.firstResponse);
      expect(now.response).toEqual(request.answered.response);
      expect(now.store.created, 'a second claim, outbox entry or order').toEqual([]);
      // Completing a key record its crashed owner left in progress is the one write a retry may make.
      expect(now.store).toEqual(request.answered.store);
    });

    it('the outbox publisher re-sends each pending entry as stored, nothing published, and creates no entry', async () => {
      const now = await answerPublish(fixture);
      // Every field the earlier release put on the wire, with its value (MessageId, body, CloudEvents id and source...).
      expect(now.sent).toMatchObject(fixture.publish.sent);
      expect(now.sent.length).toBe(fixture.publish.sent.length);
      expect(now.store.created, 'a second outbox entry, or anything else').toEqual([]);
      expect(now.store.changed).toEqual(fixture.publish.store.changed);
      expect(now.store.effects).toEqual(fixture.publish.store.effects);
    });

    it('the shipment reconciler settles its shipment records as the earlier release did, without booking again', async () => {
      const now = await answerReconcile(fixture);
      expect(now.examined).toBe(fixture.reconcile.examined);
      expect(now.items).toEqual(fixture.reconcile.items);
      expect(now.store).toEqual(fixture.reconcile.store);
      expect(now.carrier.book, 'bookings at the carrier').toBe(fixture.reconcile.carrier.book);
    });
  });
});
