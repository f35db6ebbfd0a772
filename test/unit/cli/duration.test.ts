import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/cli/duration.js';

describe('parseDuration', () => {
  it('reads durations with a unit and refuses anything else', () => {
    expect([parseDuration('90s'), parseDuration('15m'), parseDuration('2h'), parseDuration('7d')]).toEqual([90_000, 900_000, 7_200_000, 604_800_000]);
    expect(() => parseDuration('5 minutes')).toThrow('"5 minutes" is not a duration such as 90s, 15m, 2h or 7d');
  });
});
