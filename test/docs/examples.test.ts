import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { creditPointsOnce } from '../../docs/examples/creditLoyaltyPoints.js';
import { InMemoryDocumentStore } from '../../src/idempotency/index.js';

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

  it('counts 20 concurrent copies and 10 different messages exactly once each', async () => {
    const store = new InMemoryDocumentStore();
    const copies = Array.from({ length: 20 }, () => creditPointsOnce(store, { messageId: 'same', body: { customerId: 'c-2', points: 5 } }));
    const others = Array.from({ length: 10 }, (_, i) => creditPointsOnce(store, { messageId: `m-${i}`, body: { customerId: 'c-2', points: 1 } }));
    const outcomes = await Promise.all([...copies, ...others]);
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(11);
    expect((await store.read<{ id: string; balance: number }>('c-2', 'c-2'))?.document.balance).toBe(15);
  });

  it('is quoted in docs/architecture.md as it is in the file, so the two cannot drift', () => {
    const example = readFileSync('docs/examples/creditLoyaltyPoints.ts', 'utf8');
    const body = example.slice(example.indexOf('export async function'));
    expect(readFileSync('docs/architecture.md', 'utf8')).toContain(body.trim());
  });
});
