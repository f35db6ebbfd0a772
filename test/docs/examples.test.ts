import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { creditPointsOnce } from '../../docs/examples/creditLoyaltyPoints.js';
import { InMemoryDocumentStore, create, replace } from '../../src/idempotency/index.js';

describe('the "use the core in your own consumer" example (docs/architecture.md)', () => {
  it('credits once, absorbs a redelivery, flags a reused key, refuses a keyless message', async () => {
    const store = new InMemoryDocumentStore();
    const message = { messageId: 'earn-1', body: { customerId: 'c-1', points: 50 } };
    expect(await creditPointsOnce(store, message)).toBe('credited');
    expect(await creditPointsOnce(store, message)).toBe('duplicate');
    expect(await creditPointsOnce(store, { ...message, body: { customerId: 'c-1', points: 99 } })).toBe('conflict');
    expect(await creditPointsOnce(store, { body: message.body })).toBe('no-key');
    expect((await store.read<{ id: string; balance: number }>('c-1', 'c-1'))?.document.balance).toBe(50);
  });

  it('counts 20 concurrent copies and 10 different messages exactly once each, a message handed back redelivered', async () => {
    const store = new InMemoryDocumentStore();
    // A 'retry' goes back to the broker, which delivers it again: as many times as it takes here.
    const deliver = async (message: Parameters<typeof creditPointsOnce>[1]): Promise<string> => {
      for (;;) {
        const outcome = await creditPointsOnce(store, message);
        if (outcome !== 'retry') return outcome;
      }
    };
    const copies = Array.from({ length: 20 }, () => deliver({ messageId: 'same', body: { customerId: 'c-2', points: 5 } }));
    const others = Array.from({ length: 10 }, (_, i) => deliver({ messageId: `m-${i}`, body: { customerId: 'c-2', points: 1 } }));
    const outcomes = await Promise.all([...copies, ...others]);
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(11);
    expect((await store.read<{ id: string; balance: number }>('c-2', 'c-2'))?.document.balance).toBe(15);
  });

  it('hands a message back after 10 lost races in a row, having credited nothing, and keeps its marker for 30 days', async () => {
    const inner = new InMemoryDocumentStore();
    let commits = 0;
    const racing: typeof inner = Object.assign(Object.create(inner) as typeof inner, {
      commit: async (pk: string, ops: Parameters<typeof inner.commit>[1]) => {
        commits += 1;
        const account = await inner.read<{ id: string; balance: number }>('c-3', 'c-3');
        if (account) await inner.commit('c-3', [replace({ ...account.document }, account.etag)]); // another writer, every time
        return inner.commit(pk, ops);
      },
    });
    await inner.commit('c-3', [create({ id: 'c-3', balance: 0 } as { id: string })]);
    expect(await creditPointsOnce(racing, { messageId: 'r-1', body: { customerId: 'c-3', points: 7 } })).toBe('retry');
    expect(commits).toBe(10);
    expect((await inner.read<{ id: string; balance: number }>('c-3', 'c-3'))?.document.balance).toBe(0);
    expect(await creditPointsOnce(inner, { messageId: 'r-1', body: { customerId: 'c-3', points: 7 } })).toBe('credited');
    expect((await inner.read<{ id: string; ttl?: number }>('c-3', 'inbox|loyalty|r-1'))?.document.ttl).toBe(30 * 24 * 3600);
  });

  it('is quoted in docs/architecture.md as it is in the file, so the two cannot drift', () => {
    const example = readFileSync('docs/examples/creditLoyaltyPoints.ts', 'utf8');
    const body = example.slice(example.indexOf('export async function'));
    expect(readFileSync('docs/architecture.md', 'utf8')).toContain(body.trim());
    expect(readFileSync('README.md', 'utf8')).toContain(example.slice(example.indexOf('const markerTtlSeconds')).trim());
  });
});
