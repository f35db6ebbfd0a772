import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';

describe('InMemoryDocumentStore', () => {
  it('hides a document once its ttl (seconds) has passed, as Cosmos does', async () => {
    let nowMs = Date.parse('2026-11-30T00:00:00Z');
    const store = new InMemoryDocumentStore(() => nowMs);
    await store.commit('p', [create({ id: 'marker', ttl: 60 } as { id: string })]);
    nowMs += 59_999;
    expect(await store.read('p', 'marker')).toBeDefined();
    nowMs += 1;
    expect(await store.read('p', 'marker')).toBeUndefined();
    expect(await store.commit('p', [create({ id: 'marker' })])).toEqual({ kind: 'committed' });
  });
});
