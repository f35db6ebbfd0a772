import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore, create, matchesQuery } from '../../../src/idempotency/index.js';
import { compareByField } from '../../../src/idempotency/documentStore.js';

// The in-memory store's query test and sort: bounds only ever match text, and the sort is the
// ordinal one the store's ORDER BY applies, a document without the field first.
describe('queries in memory, at their edges', () => {
  it('never match a number against a text bound, even one it would compare below or above', () => {
    expect(matchesQuery({ docType: 'parked', at: 2025 }, { docType: 'parked', before: { field: 'at', value: '2026' } })).toBe(false);
    expect(matchesQuery({ docType: 'parked', at: 2027 }, { docType: 'parked', after: { field: 'at', value: '2026' } })).toBe(false);
    expect(matchesQuery({ docType: 'parked', at: '2027' }, { docType: 'parked', after: { field: 'at', value: '2026' } })).toBe(true);
  });

  it('sort ordinally by the field, equal values as equal, and a document without it first', async () => {
    const compare = compareByField('at');
    expect(compare({ at: 'a' }, { at: 'b' })).toBeLessThan(0);
    expect(compare({ at: 'b' }, { at: 'a' })).toBeGreaterThan(0);
    expect(compare({ at: 'a' }, { at: 'a' })).toBe(0);
    expect(compare({}, { at: '' })).toBe(0);
    const store = new InMemoryDocumentStore();
    await store.commit('p', [
      create({ id: 'd1', docType: 'x', at: 'B' } as { id: string }),
      create({ id: 'd2', docType: 'x' } as { id: string }),
      create({ id: 'd3', docType: 'x', at: 'A' } as { id: string }),
    ]);
    expect((await store.find({ docType: 'x', partitionKey: 'p', orderBy: 'at' })).map((d) => d.document.id)).toEqual(['d2', 'd3', 'd1']);
  });
});
