import { describe, expect, it } from 'vitest';
import { payloadDifferences } from '../../../src/cli/payloadDifference.js';

describe('payloadDifferences', () => {
  it('names each differing field by its path, with both values', () => {
    const message = { orderId: 'o-1', customerId: 'someone-else', lines: [{ sku: 'A', quantity: 3 }] };
    const stored = { orderId: 'o-1', customerId: 'c-1', lines: [{ sku: 'A', quantity: 2 }] };
    expect(payloadDifferences(message, stored)).toEqual([
      { path: 'customerId', message: 'someone-else', stored: 'c-1' },
      { path: 'lines[0].quantity', message: 3, stored: 2 },
    ]);
  });

  it('reports fields only one side has, and an extra line', () => {
    expect(payloadDifferences({ a: 1, lines: [1, 2] }, { b: 2, lines: [1] })).toEqual([
      { path: 'a', message: 1, stored: undefined },
      { path: 'lines[1]', message: 2, stored: undefined },
      { path: 'b', message: undefined, stored: 2 },
    ]);
  });

  it('finds nothing between equal payloads whatever their key order', () => {
    expect(payloadDifferences({ x: { p: 1, q: [] } }, { x: { q: [], p: 1 } })).toEqual([]);
  });
});
