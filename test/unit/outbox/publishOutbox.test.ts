import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../../src/config.js';
import { InMemoryDocumentStore, TransientStoreError, create, replace } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, WriteOperation } from '../../../src/idempotency/index.js';
import {
  TransientPublishError,
  TransientSendError,
  createOutboxPublisher,
  isPendingOutbox,
  maxMessageIdLength,
  messageIdFor,
  orderEventsSource,
  newOutboxDocument,
  publishOutboxEntries,
  sweepOutbox,
} from '../../../src/outbox/index.js';
import type { EventSender, OutboxDocument } from '../../../src/outbox/index.js';
import { ScriptedSender, outboxEntry, outboxNow, outboxNowMs, publishContext, storedEntries } from '../../support/outboxHarness.js';
import { RecordingLog } from '../../support/recordingLog.js';
import { TestMetricReader } from '../../support/testMetricReader.js';

const nowMs = outboxNowMs;
const now = outboxNow;
const entry = outboxEntry;
const stored = storedEntries;
const ctxOf = publishContext;

describe('an outbox entry', () => {
  it('carries its message in CloudEvents binary mode: id, source, type as application properties, the order as session', () => {
    const e = entry('a');
    expect(e).toMatchObject({ state: 'pending', publishedAt: null, destination: 'order-events', causationMessageId: 'm-a' });
    expect(e.message).toMatchObject({ messageId: 'a', subject: 'OrderAccepted', sessionId: 'order-a', correlationId: 'm-a', body: { id: 'a' } });
    expect(e.message.applicationProperties).toMatchObject({
      'cloudEvents:id': 'a',
      'cloudEvents:type': 'OrderAccepted',
      'cloudEvents:specversion': '1.0',
      'cloudEvents:time': e.createdAt,
    });
  });

  it('says it comes from a fixed source: with the id, the key consumers deduplicate by, so it may never change between releases', () => {
    expect(orderEventsSource).toBe('/idempotent-order-consumer/orders');
    expect(entry('a').message.applicationProperties['cloudEvents:source']).toBe('/idempotent-order-consumer/orders');
  });

  it('carries a correlation id only when a message caused it', () => {
    const uncaused = newOutboxDocument({
      id: 'u',
      orderId: 'o',
      eventType: 'OrderAccepted',
      destination: 'order-events',
      body: {},
      createdAt: now().toISOString(),
    });
    expect(uncaused.message).not.toHaveProperty('correlationId');
    expect(uncaused).not.toHaveProperty('causationMessageId');
  });

  it("is the publisher's business only while it is a pending outbox entry", () => {
    expect(isPendingOutbox({ docType: 'outbox', state: 'pending' })).toBe(true);
    expect(isPendingOutbox({ docType: 'outbox', state: 'published' })).toBe(false);
    expect(isPendingOutbox({ docType: 'outbox', state: 'failed' })).toBe(false);
    expect(isPendingOutbox({ docType: 'order', state: 'pending' })).toBe(false);
  });

  it('uses its id as MessageId up to the 128 characters Service Bus takes, and a stable digest beyond', () => {
    expect(messageIdFor('x'.repeat(maxMessageIdLength))).toBe('x'.repeat(maxMessageIdLength));
    const long = messageIdFor('y'.repeat(maxMessageIdLength + 1));
    expect(long).toMatch(/^outbox\|\*[0-9a-f]{64}$/);
    expect(long.length).toBeLessThanOrEqual(maxMessageIdLength);
    expect(messageIdFor('y'.repeat(maxMessageIdLength + 1))).toBe(long);
    expect(messageIdFor('z'.repeat(maxMessageIdLength + 1))).not.toBe(long);
  });
});

describe('publishing outbox entries', () => {
  it('sends each pending entry, then marks it published with the retention TTL', async () => {
    const store = new InMemoryDocumentStore();
    const sender = new ScriptedSender();
    const result = await publishOutboxEntries(await stored(store, entry('a'), entry('b')), ctxOf(store, sender));
    expect(sender.sent.map((s) => s.messageId)).toEqual(['a', 'b']);
    expect(result.published.map((p) => p.id)).toEqual(['a', 'b']);
    expect((await store.read<OutboxDocument>('order-a', 'a'))?.document).toMatchObject({ state: 'published', publishedAt: now().toISOString(), ttl: 3600 });
  });

  it('publishes an entry as it is stored: one the previous release wrote (MessageId = the order id) keeps it', async () => {
    const store = new InMemoryDocumentStore();
    const previous = newOutboxDocument({
      id: 'outbox|OrderPlaced|o-1',
      orderId: 'o-1',
      eventType: 'OrderPlaced',
      destination: 'orders',
      body: { orderId: 'o-1' },
      createdAt: now().toISOString(),
      messageId: 'o-1',
    });
    const sender = new ScriptedSender();
    await publishOutboxEntries(await stored(store, previous), ctxOf(store, sender));
    expect(sender.sent).toEqual([{ destination: 'orders', messageId: 'o-1' }]);
  });

  it('sets aside an entry the broker refuses, with its reason, and sends the rest', async () => {
    const store = new InMemoryDocumentStore();
    const sender = new ScriptedSender((_d, m) =>
      m.messageId === 'big' ? { kind: 'refused', reason: 'MessageSizeExceeded', detail: 'too big' } : { kind: 'sent' },
    );
    const result = await publishOutboxEntries(await stored(store, entry('big'), entry('ok')), ctxOf(store, sender));
    expect(result.failed.map((f) => f.id)).toEqual(['big']);
    expect((await store.read<OutboxDocument>('order-big', 'big'))?.document).toMatchObject({
      state: 'failed',
      failure: { reason: 'MessageSizeExceeded', detail: 'too big', at: now().toISOString() },
    });
    expect((await store.read<OutboxDocument>('order-ok', 'ok'))?.document.state).toBe('published');
  });

  it('leaves the entries of a destination that fails for now pending, and publishes the other destinations', async () => {
    const store = new InMemoryDocumentStore();
    const sender = new ScriptedSender((destination) => (destination === 'busy' ? 'transient' : { kind: 'sent' }));
    const result = await publishOutboxEntries(await stored(store, entry('a', 'busy'), entry('b', 'order-events')), ctxOf(store, sender));
    expect(result.transient.map((t) => t.destination)).toEqual(['busy']);
    expect((await store.read<OutboxDocument>('order-a', 'a'))?.document.state).toBe('pending');
    expect((await store.read<OutboxDocument>('order-b', 'b'))?.document.state).toBe('published');
  });

  it('counts an entry another publisher marked meanwhile as already handled, and leaves its mark alone', async () => {
    const store = new InMemoryDocumentStore();
    const [seen] = await stored(store, entry('a'));
    const other = { ...seen!.document, state: 'published' as const, publishedAt: 'earlier' };
    await store.commit('order-a', [replace(other, seen!.etag)]);
    const result = await publishOutboxEntries([seen!], ctxOf(store, new ScriptedSender()));
    expect(result).toMatchObject({ published: [], alreadyHandled: 1 });
    expect((await store.read<OutboxDocument>('order-a', 'a'))?.document.publishedAt).toBe('earlier');
  });

  it('goes on past a mark that fails for now, and reports it so the batch is tried again', async () => {
    const inner = new InMemoryDocumentStore();
    const flaky: DocumentStore = {
      read: (p, id) => inner.read(p, id),
      find: (q) => inner.find(q),
      commit: async (p: string, ops: readonly WriteOperation[]): Promise<CommitResult> => {
        if (p === 'order-a') throw new TransientStoreError('503 from Cosmos DB', 503);
        return inner.commit(p, ops);
      },
    };
    const entries = await stored(inner, entry('a'), entry('b'));
    const result = await publishOutboxEntries(entries, ctxOf(flaky, new ScriptedSender()));
    expect(result.unmarked).toHaveLength(1);
    expect(result.published.map((p) => p.id)).toEqual(['b']);
    expect((await inner.read<OutboxDocument>('order-a', 'a'))?.document.state).toBe('pending');
  });
});

describe('publishing: what is not its to absorb', () => {
  it('lets an error that is not a transient send failure through, so the invocation fails loudly', async () => {
    const store = new InMemoryDocumentStore();
    const broken: EventSender = { send: async () => Promise.reject(new TypeError('a bug in the sender')), close: async () => {} };
    await expect(publishOutboxEntries(await stored(store, entry('a')), ctxOf(store, broken))).rejects.toThrow('a bug in the sender');
  });

  it('marks what another destination sent before it lets a broken send through', async () => {
    const store = new InMemoryDocumentStore();
    const inner = new ScriptedSender();
    const partlyBroken: EventSender = {
      send: async (d, m) => (d === 'broken' ? Promise.reject(new TypeError('a bug in the sender')) : inner.send(d, m)),
      close: async () => {},
    };
    await expect(publishOutboxEntries(await stored(store, entry('a', 'broken'), entry('b')), ctxOf(store, partlyBroken))).rejects.toThrow(
      new TypeError('a bug in the sender'),
    );
    expect((await store.read<OutboxDocument>('order-a', 'a'))?.document.state).toBe('pending');
    expect((await store.read<OutboxDocument>('order-b', 'b'))?.document.state).toBe('published');
  });

  it('refuses a sender that answers for fewer messages than it was given', async () => {
    const store = new InMemoryDocumentStore();
    const short: EventSender = { send: async () => [], close: async () => {} };
    await expect(publishOutboxEntries(await stored(store, entry('a')), ctxOf(store, short))).rejects.toThrow('the sender answered 0 outcomes for 1 messages');
  });

  it('refuses a sender that answers for more messages than it was given, and marks none of them', async () => {
    const store = new InMemoryDocumentStore();
    const long: EventSender = { send: async () => [{ kind: 'sent' }, { kind: 'sent' }], close: async () => {} };
    await expect(publishOutboxEntries(await stored(store, entry('a')), ctxOf(store, long))).rejects.toThrow('the sender answered 2 outcomes for 1 messages');
    expect((await store.read<OutboxDocument>('order-a', 'a'))?.document.state).toBe('pending');
  });

  it("throws the first error that is not transient, in the page's order, when several marks break", async () => {
    const inner = new InMemoryDocumentStore();
    const entries = await stored(inner, entry('a'), entry('b'));
    const failing: DocumentStore = {
      read: (p, id) => inner.read(p, id),
      find: (q) => inner.find(q),
      commit: async (p) => Promise.reject(new RangeError(`bad document in ${p}`)),
    };
    await expect(publishOutboxEntries(entries, ctxOf(failing, new ScriptedSender()))).rejects.toThrow(new RangeError('bad document in order-a'));
  });

  it('lets a store error that is not transient through', async () => {
    const inner = new InMemoryDocumentStore();
    const entries = await stored(inner, entry('a'));
    const failing: DocumentStore = {
      read: (p, id) => inner.read(p, id),
      find: (q) => inner.find(q),
      commit: async () => Promise.reject(new RangeError('bad document')),
    };
    await expect(publishOutboxEntries(entries, ctxOf(failing, new ScriptedSender()))).rejects.toThrow('bad document');
  });

  it('names every destination that failed in its error', async () => {
    const error = new TransientPublishError([new TransientSendError('busy', new Error('ServiceBusy')), new TransientStoreError('503 from Cosmos DB', 503)]);
    expect(error.name).toBe('TransientPublishError');
    expect(error.message).toBe('outbox: sending to busy failed for now: ServiceBusy; 503 from Cosmos DB');
  });
});

describe('the publisher (composition root)', () => {
  const settings = loadSettings({
    ServiceBusConnection: 'Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=k',
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    OUTBOX_LAG_ALERT_SECONDS: '300',
    OUTBOX_SWEEP_MIN_AGE_SECONDS: '60',
    RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
  });

  function publisherWith(store: DocumentStore, sender: EventSender) {
    const reader = new TestMetricReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
    return { publisher: createOutboxPublisher(settings, { store, sender, now, meter }), reader };
  }

  it('publishes only pending outbox entries from a change feed batch, and throws after the batch when some must be tried again', async () => {
    const store = new InMemoryDocumentStore();
    const [a, b] = await stored(store, entry('a'), entry('b', 'busy'));
    const log = new RecordingLog();
    const { publisher } = publisherWith(store, new ScriptedSender((d) => (d === 'busy' ? 'transient' : { kind: 'sent' })));
    const feed = [
      { id: 'order-1', docType: 'order' },
      { ...a!.document, _etag: a!.etag, _lsn: 7 },
      { ...b!.document, _etag: b!.etag },
      { ...entry('c'), state: 'published' },
    ];
    await expect(publisher.publishChanges(feed, log)).rejects.toBeInstanceOf(TransientPublishError);
    expect((await store.read<OutboxDocument & { _lsn?: number }>('order-a', 'a'))?.document).toMatchObject({ state: 'published' });
    expect((await store.read<OutboxDocument & Record<string, unknown>>('order-a', 'a'))?.document).not.toHaveProperty('_lsn');
    expect(log.lines.find((l) => l.record.event === 'outbox-publish')).toMatchObject({
      level: 'warn',
      record: { published: 1, retryLater: [expect.stringContaining('busy')] },
    });
  });

  it('marks what it publishes with the machine clock when given none, and closes its sender when closed', async () => {
    const store = new InMemoryDocumentStore();
    const [a] = await stored(store, entry('a'));
    let closed = 0;
    const sender = Object.assign(new ScriptedSender(), { close: async () => void (closed += 1) });
    const publisher = createOutboxPublisher(settings, { store, sender });
    const before = Date.now();
    await publisher.publishChanges([{ ...a!.document, _etag: a!.etag }], new RecordingLog());
    const publishedAt = Date.parse((await store.read<OutboxDocument>('order-a', 'a'))?.document.publishedAt ?? '');
    expect(publishedAt).toBeGreaterThanOrEqual(before);
    expect(publishedAt).toBeLessThanOrEqual(Date.now());
    await publisher.close();
    expect(closed).toBe(1);
  });

  it('writes an error line per entry set aside', async () => {
    const store = new InMemoryDocumentStore();
    const [a] = await stored(store, entry('a', 'nowhere'));
    const log = new RecordingLog();
    const { publisher } = publisherWith(store, new ScriptedSender(() => ({ kind: 'refused', reason: 'MessagingEntityNotFound', detail: 'no such topic' })));
    await publisher.publishChanges([{ ...a!.document, _etag: a!.etag }], log);
    expect(log.lines).toContainEqual({
      level: 'error',
      record: expect.objectContaining({ event: 'outbox', outcome: 'failed', id: 'a', destination: 'nowhere', reason: 'MessagingEntityNotFound' }),
    });
  });

  it('counts each outcome by destination, measures the publish delay, and logs a line only when something happened', async () => {
    const store = new InMemoryDocumentStore();
    const [a, b] = await stored(store, entry('a', 'order-events', new Date(nowMs - 5000).toISOString()), entry('b', 'nowhere'));
    const log = new RecordingLog();
    const { publisher, reader } = publisherWith(
      store,
      new ScriptedSender((d) => (d === 'nowhere' ? { kind: 'refused', reason: 'MessagingEntityNotFound', detail: 'no such topic' } : { kind: 'sent' })),
    );
    await publisher.publishChanges(
      [
        { ...a!.document, _etag: a!.etag },
        { ...b!.document, _etag: b!.etag },
      ],
      log,
    );
    expect(log.lines).toContainEqual({
      level: 'error',
      record: expect.objectContaining({ id: 'b', orderId: 'order-b', messageId: 'b', reason: 'MessagingEntityNotFound', detail: 'no such topic' }),
    });
    expect(log.lines).toContainEqual({
      level: 'info',
      record: { event: 'outbox-publish', source: 'change-feed', published: 1, failed: 1, alreadyHandled: 0, unmarked: 0 },
    });
    const { resourceMetrics } = await reader.collect();
    const metric = (name: string) => resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    expect(metric('outbox.events')?.dataPoints.map((p) => [p.attributes, p.value])).toEqual(
      expect.arrayContaining([
        [{ outcome: 'published', destination: 'order-events' }, 1],
        [{ outcome: 'failed', destination: 'nowhere' }, 1],
      ]),
    );
    expect((metric('outbox.publish_delay')?.dataPoints[0]?.value as { sum?: number }).sum).toBe(5);

    const quiet = new RecordingLog();
    await publisher.publishChanges([{ id: 'order-1', docType: 'order' }], quiet);
    expect(quiet.lines).toEqual([]);
  });

  it('counts entries another publisher handled first, and says so in its line', async () => {
    const store = new InMemoryDocumentStore();
    const [a] = await stored(store, entry('a'));
    const published: OutboxDocument = { ...a!.document, state: 'published', publishedAt: new Date(nowMs).toISOString() };
    await store.commit('order-a', [replace(published, a!.etag)]);
    const log = new RecordingLog();
    const { publisher, reader } = publisherWith(store, new ScriptedSender());
    await publisher.publishChanges([{ ...a!.document, _etag: a!.etag }], log);
    expect(log.lines).toContainEqual({ level: 'info', record: expect.objectContaining({ event: 'outbox-publish', published: 0, alreadyHandled: 1 }) });
    const { resourceMetrics } = await reader.collect();
    const events = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'outbox.events');
    expect(events?.dataPoints.map((p) => [p.attributes, p.value])).toContainEqual([{ outcome: 'already-handled' }, 1]);
  });

  it('sweeps: republishes what waited past the minimum age, leaves younger entries to the change feed, and logs the lag', async () => {
    const store = new InMemoryDocumentStore();
    await stored(
      store,
      entry('old', 'order-events', new Date(nowMs - 120_000).toISOString()),
      entry('young', 'order-events', new Date(nowMs - 10_000).toISOString()),
    );
    const log = new RecordingLog();
    const sender = new ScriptedSender();
    const { publisher, reader } = publisherWith(store, sender);
    const result = await publisher.sweep(log);
    expect(sender.sent.map((s) => s.messageId)).toEqual(['old']);
    expect(result).toMatchObject({ pending: 2, oldestPendingAgeSeconds: 120, oldestPendingId: 'old' });
    expect(log.lines).toContainEqual({
      level: 'info',
      record: expect.objectContaining({ event: 'outbox-lag', oldestPendingAgeSeconds: 120, thresholdSeconds: 300 }),
    });
    expect(log.lines).toContainEqual({ level: 'info', record: expect.objectContaining({ event: 'outbox-publish', source: 'sweep', published: 1 }) });
    const { resourceMetrics } = await reader.collect();
    const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name));
    expect(names).toEqual(expect.arrayContaining(['outbox.events', 'outbox.lag', 'outbox.publish_delay']));
  });

  it('finds the oldest pending entry wherever it is, republishes only what is older than the minimum age, and never touches failed or published entries', async () => {
    const store = new InMemoryDocumentStore();
    const at = (secondsAgo: number) => new Date(nowMs - secondsAgo * 1000).toISOString();
    await stored(store, entry('newer', 'order-events', at(90)), entry('oldest', 'order-events', at(200)), entry('boundary', 'order-events', at(60)));
    const failed = { ...entry('failed', 'order-events', at(500)), state: 'failed' as const };
    const published = { ...entry('published', 'order-events', at(500)), state: 'published' as const };
    await store.commit(failed.orderId, [create(failed)]);
    await store.commit(published.orderId, [create(published)]);
    const sender = new ScriptedSender();
    const result = await sweepOutbox(ctxOf(store, sender), { minAgeSeconds: 60, maxItemsPerRun: 100 });
    expect(result).toMatchObject({ pending: 3, oldestPendingId: 'oldest', oldestPendingAgeSeconds: 200 });
    // Exactly 60 s old is not "pending longer than" 60 s: the change feed still has it.
    expect(sender.sent.map((s) => s.messageId).sort()).toEqual(['newer', 'oldest']);
  });

  it('writes the lag as an error line once the oldest pending entry is older than the threshold', async () => {
    const store = new InMemoryDocumentStore();
    await stored(store, entry('stuck', 'busy', new Date(nowMs - 301_000).toISOString()));
    const log = new RecordingLog();
    const { publisher } = publisherWith(store, new ScriptedSender(() => 'transient'));
    await expect(publisher.sweep(log)).rejects.toBeInstanceOf(TransientPublishError);
    expect(log.lines).toContainEqual({
      level: 'error',
      record: expect.objectContaining({ event: 'outbox-lag', oldestPendingAgeSeconds: 301, oldestPendingId: 'stuck' }),
    });
  });

  it('reports a lag of 0 when nothing is pending', async () => {
    const log = new RecordingLog();
    const { publisher } = publisherWith(new InMemoryDocumentStore(), new ScriptedSender());
    expect(
      await sweepOutbox(
        { store: new InMemoryDocumentStore(), sender: new ScriptedSender(), now, publishedTtlSeconds: 1, markConcurrency: 1 },
        { minAgeSeconds: 60, maxItemsPerRun: 100 },
      ),
    ).toMatchObject({ pending: 0 });
    await publisher.sweep(log);
    expect(log.lines).toContainEqual({ level: 'info', record: expect.objectContaining({ event: 'outbox-lag', pending: 0, oldestPendingAgeSeconds: 0 }) });
  });
});
