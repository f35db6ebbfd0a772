import { describe, expect, it } from 'vitest';
import { floodLatency, halvesOfRound, median } from '../../../dev/chaos/floodLatency.js';

// The flood run's latency verdict (npm run chaos -- --flood): paired rounds and the median of their ratios.
const ms = (n: number, value: number, slow: number[] = []) => [...Array.from({ length: n - slow.length }, () => value), ...slow];

describe('floodLatency', () => {
  it('gives each round its p99 ratio and decides on their median, so one disturbed round does not', () => {
    const rounds = [
      { baselineMs: ms(200, 40, [100, 100, 100]), floodMs: ms(200, 60, [150, 150, 150]) },
      // The machine was busy during this round's baseline: its three slowest decide its p99.
      { baselineMs: ms(200, 40, [900, 900, 900]), floodMs: ms(200, 60, [160, 160, 160]) },
      { baselineMs: ms(200, 40, [100, 100, 100]), floodMs: ms(200, 60, [170, 170, 170]) },
    ];
    const latency = floodLatency(rounds, 100);
    expect(latency.rounds.map((r) => [r.baseP99, r.floodP99])).toEqual([
      [100, 150],
      [900, 160],
      [100, 170],
    ]);
    expect(latency.rounds.map((r) => r.ratio)).toEqual([1.5, 160 / 900, 1.7]);
    expect(latency.medianRatio).toBe(1.5);
    expect(latency.pooled).toMatchObject({ baseP50: 40, floodP50: 60 });
  });

  it('floors a baseline p99 at the send tick: a faster baseline is the schedule, not the consumer', () => {
    expect(floodLatency([{ baselineMs: ms(200, 20), floodMs: ms(200, 150) }], 100).medianRatio).toBe(1.5);
    expect(floodLatency([{ baselineMs: ms(200, 300), floodMs: ms(200, 150) }], 100).medianRatio).toBe(0.5);
  });

  it('alternates which half of a round runs first', () => {
    expect([0, 1, 2, 3].map(halvesOfRound)).toEqual([
      ['baseline', 'flood'],
      ['flood', 'baseline'],
      ['baseline', 'flood'],
      ['flood', 'baseline'],
    ]);
  });

  it('takes the middle value, or the mean of the two middle ones', () => {
    expect([median([]), median([3]), median([5, 1, 3]), median([4, 1, 3, 2])]).toEqual([0, 3, 3, 2.5]);
  });
});
