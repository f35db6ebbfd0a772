import { describe, expect, it } from 'vitest';
import { bodyBytes, requestUnitsOf } from '../../../dev/store/requestUnitModel.js';

// Microsoft's worked examples (understand-request-unit-consumption), on documents of this container.
const indexedFields = { docType: 'order', messageId: 'm', dedupKey: 'k', reason: 'r', rejectedAt: 't', state: 's', parkedAt: 'p', createdAt: 'c' };
const small = { id: 'o-1', orderId: 'o-1', ...indexedFields };
const sized = (kb: number) => ({ id: 'big', orderId: 'o-1', filler: 'x'.repeat(kb * 1024 - 250) });

describe('the request unit model', () => {
  it('charges a create of a 1 KB document with 10 indexed terms 7 RU: id, _ts and the 8 indexed fields it has', () => {
    expect(requestUnitsOf({ kind: 'commit', writes: [{ kind: 'create', document: small }], failedAt: undefined })).toBeCloseTo(7, 5);
  });

  it('charges a replace changing one indexed field (and _ts) 10.8 RU; not knowing the old version, every indexed term counts as changed', () => {
    const next = { ...small, state: 'applied' };
    expect(requestUnitsOf({ kind: 'commit', writes: [{ kind: 'replace', document: next, previous: small }], failedAt: undefined })).toBeCloseTo(10.8, 5);
    expect(requestUnitsOf({ kind: 'commit', writes: [{ kind: 'replace', document: next, previous: undefined }], failedAt: undefined })).toBeCloseTo(14, 5);
  });

  it('leaves out fields the policy does not index and values that are not scalars', () => {
    const unindexed = { id: 'o-1', orderId: 'o-1', customerId: 'c', lines: [1, 2], state: { nested: true } };
    expect(requestUnitsOf({ kind: 'commit', writes: [{ kind: 'create', document: unindexed }], failedAt: undefined })).toBeCloseTo(5.4, 5);
  });

  it('charges a point read 1 RU up to 1 KB, 9.95 RU at 128 KB, and a miss 1 RU', () => {
    expect(requestUnitsOf({ kind: 'read', found: small })).toBe(1);
    expect(requestUnitsOf({ kind: 'read', found: sized(128) })).toBeCloseTo(9.95, 1);
    expect(requestUnitsOf({ kind: 'read', found: undefined })).toBe(1);
  });

  it('charges a batch the sum of its operations; a failed one, those before the failure and 1 RU for it', () => {
    const create = { kind: 'create' as const, document: small };
    expect(requestUnitsOf({ kind: 'commit', writes: [create, create], failedAt: undefined })).toBeCloseTo(14, 5);
    expect(requestUnitsOf({ kind: 'commit', writes: [create, create, create], failedAt: 1 })).toBeCloseTo(8, 5);
    expect(requestUnitsOf({ kind: 'commit', writes: [create, create], failedAt: 0 })).toBe(1);
  });

  it('charges a query in one partition 2 RU and a point read per document it returns', () => {
    expect(requestUnitsOf({ kind: 'query', found: [] })).toBe(2);
    expect(requestUnitsOf({ kind: 'query', found: [small, small] })).toBe(4);
  });

  it("sizes a document by its JSON body without Cosmos DB's system properties", () => {
    expect(bodyBytes({ id: 'é', _rid: 'r', _self: 's', _etag: 'e', _attachments: 'a', _ts: 1 })).toBe(Buffer.byteLength('{"id":"é"}'));
  });
});
