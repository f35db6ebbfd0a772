import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config.js';
import { InMemoryDocumentStore, TransientStoreError } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, VersionedDocument, WriteOperation } from '../../../src/idempotency/index.js';
import { TransientPublishError, createOutboxPublisher, publishOutboxEntries, sweepOutbox } from '../../../src/outbox/index.js';
import type { EventSender, OutboxDocument, OutboxMessage, SendOutcome } from '../../../src/outbox/index.js';
import { GatedStore } from '../../support/gatedStore.js';
import { touches } from '../../support/interleavingStore.js';
import { ScriptedSender, outboxEntry, outboxNow, outboxNowMs, publishContext, storedEntries } from '../../support/outboxHarness.js';
import { RecordingLog } from '../../support/recordingLog.js';

// The publisher marks the entries of a page concurrently, at most OUTBOX_MARK_CONCURRENCY at once:
// each mark is its own etag-guarded replace in its entry's partition, so marks are independent of
// each other; what must not change is what happens to each entry in every schedule (sent before
// marked, re-sent under the same MessageId, nothing pending left without a later send).

const ids = (...names: string[]) => names;
const stateOf = async (store: DocumentStore, id: string) => (await store.read<OutboxDocument>(`order-${id}`, id))?.document.state;
const statesOf = (store: DocumentStore, names: string[]) => Promise.all(names.map((id) => stateOf(store, id)));
const turn = () => new Promise<void>((next) => setImmediate(next));
const aged = (id: string) => outboxEntry(id, 'order-events', new Date(outboxNowMs - 600_000).toISOString());
/** As the change feed hands them over: each document with its etag and `_lsn`. */
const feedOf = (entries: readonly VersionedDocument<OutboxDocument>[]) => entries.map((e) => ({ ...e.document, _etag: e.etag, _lsn: 1 }));

const settings = loadSettings({
  ServiceBusConnection: 'Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=k',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
  OUTBOX_MARK_CONCURRENCY: '8',
  RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
});
const publisherOver = (store: DocumentStore, sender: EventSender) =>
  createOutboxPublisher(settings, { store, sender, now: outboxNow, meter: new MeterProvider().getMeter('test') });

/** A store whose commits in one partition fail `times` times as given: before applying, or after (the answer lost). */
function failingIn(inner: DocumentStore, partitionKey: string, error: Error, how: 'before-applying' | 'answer-lost', times = 1): DocumentStore {
  let left = times;
  return {
    read: (p, id) => inner.read(p, id),
    find: (q) => inner.find(q),
    commit: async (p: string, ops: readonly WriteOperation[]): Promise<CommitResult> => {
      if (p !== partitionKey || left === 0) return inner.commit(p, ops);
      left -= 1;
      if (how === 'answer-lost') await inner.commit(p, ops);
      throw error;
    },
  };
}

/** A broker that holds every send until released: which destinations are in flight at once. */
class HeldSender implements EventSender {
  readonly inFlight: string[] = [];
  private readonly held: (() => void)[] = [];
  async send(destination: string, messages: readonly OutboxMessage[]): Promise<readonly SendOutcome[]> {
    this.inFlight.push(destination);
    await new Promise<void>((go) => this.held.push(go));
    return messages.map(() => ({ kind: 'sent' }));
  }
  release(): void {
    this.held.splice(0).forEach((go) => go());
  }
  async close(): Promise<void> {}
}

describe('marking a page of sent entries', () => {
  it('has up to the concurrency of marks in flight at once, never more, and starts the next as one ends', async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new GatedStore(memory, touches('outbox'));
    const names = ids('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j');
    const entries = await storedEntries(memory, ...names.map((n) => outboxEntry(n)));
    let done = false;
    const run = publishOutboxEntries(entries, publishContext(gated, new ScriptedSender(), 4)).finally(() => (done = true));
    expect(await gated.heldNow()).toEqual(['order-a', 'order-b', 'order-c', 'order-d']);
    gated.release('order-b');
    expect(await gated.heldNow()).toEqual(['order-a', 'order-c', 'order-d', 'order-e']);
    while (!done) {
      gated.release();
      await gated.heldNow();
    }
    const result = await run;
    expect(gated.peak).toBe(4);
    expect(result.published.map((p) => p.id)).toEqual(names);
    expect(await statesOf(memory, names)).toEqual(names.map(() => 'published'));
  });

  it('marks one after another with a concurrency of 1', async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new GatedStore(memory, touches('outbox'));
    const entries = await storedEntries(memory, outboxEntry('a'), outboxEntry('b'), outboxEntry('c'));
    let done = false;
    const run = publishOutboxEntries(entries, publishContext(gated, new ScriptedSender(), 1)).finally(() => (done = true));
    expect(await gated.heldNow()).toEqual(['order-a']);
    while (!done) {
      gated.release();
      await gated.heldNow();
    }
    expect((await run).published.map((p) => p.id)).toEqual(['a', 'b', 'c']);
    expect(gated.peak).toBe(1);
  });

  it('sends to every destination of the page at once, one batch each', async () => {
    const memory = new InMemoryDocumentStore();
    const sender = new HeldSender();
    const entries = await storedEntries(memory, outboxEntry('a', 'orders'), outboxEntry('b', 'order-events'), outboxEntry('c', 'orders'));
    const run = publishOutboxEntries(entries, publishContext(memory, sender));
    await turn();
    expect(sender.inFlight).toEqual(['orders', 'order-events']);
    sender.release();
    expect((await run).published.map((p) => p.id)).toEqual(['a', 'c', 'b']);
  });
});

describe('a mark that fails among concurrent marks', () => {
  it('for now: the others are marked, the invocation throws once every mark has settled, and the retried page sends it again under its MessageId and marks it', async () => {
    const memory = new InMemoryDocumentStore();
    const names = ids('a', 'b', 'c', 'd', 'e');
    const entries = await storedEntries(memory, ...names.map((n) => outboxEntry(n)));
    const flaky = failingIn(memory, 'order-c', new TransientStoreError('503 from Cosmos DB', 503), 'before-applying');
    const gated = new GatedStore(flaky, (p, ops) => p !== 'order-c' && touches('outbox')(p, ops));
    const sender = new ScriptedSender();
    let settled = false;
    const run = publisherOver(gated, sender).publishChanges(feedOf(entries), new RecordingLog());
    run.then(
      () => (settled = true),
      () => (settled = true),
    );
    // c's mark failed at once; the other four are in flight, and the invocation waits for them.
    expect(await gated.heldNow()).toEqual(['order-a', 'order-b', 'order-d', 'order-e']);
    expect(settled).toBe(false);
    gated.release();
    await expect(run).rejects.toThrow(new TransientPublishError([new TransientStoreError('503 from Cosmos DB', 503)]));
    expect(await statesOf(memory, names)).toEqual(['published', 'published', 'pending', 'published', 'published']);

    // The trigger's retry: the same page, the same documents.
    const retried = await publisherOver(memory, sender).publishChanges(feedOf(entries), new RecordingLog());
    expect(retried).toMatchObject({ published: [expect.objectContaining({ id: 'c' })], alreadyHandled: 4, unmarked: [] });
    expect(sender.sent.map((s) => s.messageId)).toEqual([...names, ...names]);
    expect(await statesOf(memory, names)).toEqual(names.map(() => 'published'));
  });

  it('not transient: the others are still marked, then it is thrown as it came', async () => {
    const memory = new InMemoryDocumentStore();
    const entries = await storedEntries(memory, outboxEntry('a'), outboxEntry('b'), outboxEntry('c'));
    const broken = failingIn(memory, 'order-a', new RangeError('bad document'), 'before-applying');
    await expect(publishOutboxEntries(entries, publishContext(broken, new ScriptedSender()))).rejects.toThrow(new RangeError('bad document'));
    expect(await statesOf(memory, ['a', 'b', 'c'])).toEqual(['pending', 'published', 'published']);
  });

  it('with its answer lost (the replace applied): the invocation throws, the retry re-sends the same MessageId, and its mark meets the entry published (412) and counts it handled', async () => {
    const memory = new InMemoryDocumentStore();
    const names = ids('a', 'b', 'c');
    const entries = await storedEntries(memory, ...names.map((n) => outboxEntry(n)));
    const lossy = failingIn(memory, 'order-b', new TransientStoreError('408 request timeout', 408), 'answer-lost');
    const sender = new ScriptedSender();
    await expect(publisherOver(lossy, sender).publishChanges(feedOf(entries), new RecordingLog())).rejects.toBeInstanceOf(TransientPublishError);
    expect(await statesOf(memory, names)).toEqual(names.map(() => 'published'));

    const retried = await publisherOver(memory, sender).publishChanges(feedOf(entries), new RecordingLog());
    expect(retried).toMatchObject({ published: [], failed: [], alreadyHandled: 3, unmarked: [] });
    expect(sender.sent.map((s) => s.messageId)).toEqual([...names, ...names]);
  });
});

describe('schedules around concurrent marks', () => {
  it("the worker dies after the send with two of four marks done: the next instance re-sends all four under the same MessageIds and marks the other two; the first one's late marks (a lost lease, not a death) meet 412 and count as handled", async () => {
    const memory = new InMemoryDocumentStore();
    const names = ids('a', 'b', 'c', 'd');
    const entries = await storedEntries(memory, ...names.map((n) => outboxEntry(n)));
    const gated = new GatedStore(memory, touches('outbox'));
    const first = new ScriptedSender();
    let firstDone = false;
    const firstRun = publishOutboxEntries(entries, publishContext(gated, first, 4)).finally(() => (firstDone = true));
    expect(await gated.heldNow()).toEqual(['order-a', 'order-b', 'order-c', 'order-d']);
    gated.release('order-a', 'order-b');
    await gated.heldNow();
    expect(await statesOf(memory, names)).toEqual(['published', 'published', 'pending', 'pending']);

    const second = new ScriptedSender();
    const takenOver = await publishOutboxEntries(entries, publishContext(memory, second, 4));
    expect(second.sent.map((s) => s.messageId)).toEqual(entries.map((e) => e.document.message.messageId));
    expect(first.sent).toEqual(second.sent);
    expect(takenOver).toMatchObject({
      published: [expect.objectContaining({ id: 'c' }), expect.objectContaining({ id: 'd' })],
      alreadyHandled: 2,
      unmarked: [],
    });
    expect(await statesOf(memory, names)).toEqual(names.map(() => 'published'));

    expect(firstDone).toBe(false);
    gated.release();
    expect(await firstRun).toMatchObject({
      published: [expect.objectContaining({ id: 'a' }), expect.objectContaining({ id: 'b' })],
      alreadyHandled: 2,
      unmarked: [],
    });
  });

  it('the sweeper publishes entries whose change-feed marks are in flight: those marks meet 412, and the change-feed publisher counts them handled without throwing', async () => {
    const memory = new InMemoryDocumentStore();
    const names = ids('a', 'b', 'c');
    const entries = await storedEntries(memory, ...names.map(aged));
    const gated = new GatedStore(memory, touches('outbox'));
    const feedSender = new ScriptedSender();
    const feedRun = publisherOver(gated, feedSender).publishChanges(feedOf(entries), new RecordingLog());
    expect(await gated.heldNow()).toEqual(['order-a', 'order-b', 'order-c']);

    const sweeperSender = new ScriptedSender();
    const swept = await sweepOutbox(publishContext(memory, sweeperSender), { minAgeSeconds: 60, maxItemsPerRun: 100 });
    expect(swept.published.published.map((p) => p.id)).toEqual(names);
    expect(sweeperSender.sent).toEqual(feedSender.sent);

    gated.release();
    expect(await feedRun).toMatchObject({ published: [], failed: [], alreadyHandled: 3, unmarked: [] });
    expect(await statesOf(memory, names)).toEqual(names.map(() => 'published'));
  });
});
