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

describe('payloadDifferences on hostile payloads', () => {
  it('walks a payload nested 50,000 deep without recursion, comparing past 64 levels as one field', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    const differences = payloadDifferences({ orderId: 'o-1', deep }, { orderId: 'o-1' });
    expect(differences).toHaveLength(1);
    expect(differences[0]).toMatchObject({ path: expect.stringMatching(/^deep(\[0\]){63}$/), stored: undefined });
    expect(String(differences[0]?.message)).toMatch(/not compared: deeper than 64 levels/);
  });

  it('stops listing fields past its bound', () => {
    const wide = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`f${i}`, i]));
    const differences = payloadDifferences(wide, {});
    expect(differences.length).toBeLessThanOrEqual(10_002);
    expect(differences).toContainEqual({ path: '…', message: '(the fields past the first 10000 are not compared)', stored: undefined });
  });
});
