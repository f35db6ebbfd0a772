import { describe, expect, it } from 'vitest';
import { settleBounded } from '../../../src/outbox/settleBounded.js';

describe('settleBounded', () => {
  it("answers every outcome at its item's index, rejections included, once all have settled", async () => {
    const outcomes = await settleBounded([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('two');
      return n * 10;
    });
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 10 },
      { status: 'rejected', reason: new Error('two') },
      { status: 'fulfilled', value: 30 },
    ]);
  });

  it('catches a task that throws before its first await', async () => {
    const outcomes = await settleBounded(['x'], 1, (() => {
      throw new TypeError('at once');
    }) as (item: string) => Promise<never>);
    expect(outcomes).toEqual([{ status: 'rejected', reason: new TypeError('at once') }]);
  });

  it('answers an empty list with no outcome', async () => {
    expect(await settleBounded([], 4, async () => 1)).toEqual([]);
  });

  it('refuses a limit that is not a positive integer', async () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(settleBounded([1], limit, async () => 1)).rejects.toThrow(new RangeError(`a concurrency limit must be a positive integer, not ${limit}`));
    }
  });
});
