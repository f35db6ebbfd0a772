import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, replace } from '../../../src/idempotency/index.js';
import { publishOutboxEntries, sweepOutbox } from '../../../src/outbox/index.js';
import type { OutboxDocument, PublishResult } from '../../../src/outbox/index.js';
import { AnsweringStore } from '../../support/answeringStore.js';
import { InterleavingStore, touches } from '../../support/interleavingStore.js';
import { ScriptedSender, outboxEntry, outboxNowMs, publishContext, refusingSender, storedEntries } from '../../support/outboxHarness.js';

// Two publishers hold the same pending entry: the change feed's and the sweeper's, or a batch
// retried after a lease was taken over. Whatever the order of their marks, an entry whose message
// the broker accepted from anyone ends `published`: a refusal says only that one attempt failed.

const stateOf = async (store: InMemoryDocumentStore, id: string) => (await store.read<OutboxDocument>(`order-${id}`, id))?.document;

describe('marking an entry two publishers hold', () => {
  it("marks it published when its send went out, although another publisher's refusal marked it failed first", async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new InterleavingStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a'));
    let other: PublishResult | undefined;
    // A's send is accepted; before A marks it, B is refused (the entity disabled meanwhile) and marks it failed.
    gated.beforeCommit(touches('outbox'), async () => (other = await publishOutboxEntries([seen!], publishContext(memory, refusingSender()))));
    const sender = new ScriptedSender();
    const result = await publishOutboxEntries([seen!], publishContext(gated, sender));
    expect(other?.failed.map((f) => f.id)).toEqual(['a']);
    expect(sender.sent.map((s) => s.messageId)).toEqual([seen!.document.message.messageId]);
    expect(result.published.map((p) => p.id)).toEqual(['a']);
    const final = await stateOf(memory, 'a');
    expect(final).toMatchObject({ state: 'published', publishedAt: new Date(outboxNowMs).toISOString(), ttl: 3600 });
    expect(final).not.toHaveProperty('failure');
  });

  it("leaves it published when another publisher's refusal comes after the mark", async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new InterleavingStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a'));
    let other: PublishResult | undefined;
    gated.beforeCommit(touches('outbox'), async () => (other = await publishOutboxEntries([seen!], publishContext(memory, new ScriptedSender()))));
    const result = await publishOutboxEntries([seen!], publishContext(gated, refusingSender()));
    expect(other?.published.map((p) => p.id)).toEqual(['a']);
    expect(result).toMatchObject({ published: [], failed: [], alreadyHandled: 1 });
    expect(await stateOf(memory, 'a')).toMatchObject({ state: 'published' });
  });

  it('leaves it published when the sweeper, refused, marks after the change feed publisher', async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new InterleavingStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a', 'order-events', new Date(outboxNowMs - 600_000).toISOString()));
    gated.beforeCommit(touches('outbox'), () => publishOutboxEntries([seen!], publishContext(memory, new ScriptedSender())));
    const swept = await sweepOutbox(publishContext(gated, refusingSender()), { minAgeSeconds: 60, maxItemsPerRun: 100 });
    expect(swept.published).toMatchObject({ failed: [], alreadyHandled: 1 });
    expect(await stateOf(memory, 'a')).toMatchObject({ state: 'published' });
  });

  it('marks it published when its send went out and the sweeper, refused, had marked it failed first', async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new InterleavingStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a', 'order-events', new Date(outboxNowMs - 600_000).toISOString()));
    gated.beforeCommit(touches('outbox'), () => sweepOutbox(publishContext(memory, refusingSender()), { minAgeSeconds: 60, maxItemsPerRun: 100 }));
    const result = await publishOutboxEntries([seen!], publishContext(gated, new ScriptedSender()));
    expect(result.published.map((p) => p.id)).toEqual(['a']);
    expect(await stateOf(memory, 'a')).toMatchObject({ state: 'published' });
  });

  it("leaves a refused entry alone when someone put it back to pending meanwhile (an operator's requeue): the next publisher sends it", async () => {
    const memory = new InMemoryDocumentStore();
    const gated = new InterleavingStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a'));
    const touched = { ...seen!.document, createdAt: seen!.document.createdAt };
    gated.beforeCommit(touches('outbox'), () => memory.commit('order-a', [replace(touched, seen!.etag)]));
    const result = await publishOutboxEntries([seen!], publishContext(gated, refusingSender()));
    expect(result).toMatchObject({ failed: [], alreadyHandled: 1 });
    expect(await stateOf(memory, 'a')).toMatchObject({ state: 'pending' });
  });

  it('reports a sent entry it could not mark after losing every attempt, so its batch is tried again', async () => {
    const memory = new InMemoryDocumentStore();
    const answering = new AnsweringStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a'));
    answering.answerCommit(touches('outbox'), { kind: 'lost-race', operationIndex: 0 }, 100);
    const result = await publishOutboxEntries([seen!], publishContext(answering, new ScriptedSender()));
    expect(result).toMatchObject({ published: [], alreadyHandled: 0 });
    expect(result.unmarked).toHaveLength(1);
    expect(result.unmarked[0]?.message).toBe('outbox entry order-a/a was sent, but changed under 3 marks in a row');
    expect(answering.answered).toBe(3);
    expect(await stateOf(memory, 'a')).toMatchObject({ state: 'pending' });
  });

  it('counts a sent entry as handled when it was deleted before its mark (an operator), and writes nothing back', async () => {
    const memory = new InMemoryDocumentStore();
    const answering = new AnsweringStore(memory);
    const [seen] = await storedEntries(memory, outboxEntry('a'));
    answering.answerCommit(touches('outbox'), { kind: 'not-found', operationIndex: 0 });
    answering.emptyRead((_pk, id) => id === 'a');
    const result = await publishOutboxEntries([seen!], publishContext(answering, new ScriptedSender()));
    expect(result).toMatchObject({ published: [], failed: [], alreadyHandled: 1, unmarked: [] });
    expect(answering.answered).toBe(1);
  });
});
