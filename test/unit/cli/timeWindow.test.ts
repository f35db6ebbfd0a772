import { describe, expect, it } from 'vitest';
import { parseInstant, timeWindowOf } from '../../../src/cli/timeWindow.js';

const now = Date.parse('2026-12-03T08:00:00Z');

describe('parseInstant', () => {
  it('reads an ISO time, a date, or a duration ago', () => {
    expect(parseInstant('2026-12-01T10:00Z', now)).toBe(Date.parse('2026-12-01T10:00:00Z'));
    expect(parseInstant('2026-12-01', now)).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(parseInstant('2h', now)).toBe(now - 7_200_000);
  });
  it('names what it wants for anything else', () => {
    expect(() => parseInstant('yesterday', now)).toThrow(/"yesterday" is not a time such as 2026-12-03T08:00Z, or a duration ago such as 2h or 7d/);
    expect(() => parseInstant('2026-13-45', now)).toThrow(/is not a time/);
  });
});

describe('timeWindowOf', () => {
  it('defaults to the span before now', () => {
    expect(timeWindowOf({}, now, 1_000)).toEqual({ sinceMs: now - 1_000, untilMs: now });
  });
  it('refuses a window that ends before it starts', () => {
    expect(() => timeWindowOf({ since: '1h', until: '2h' }, now, 0)).toThrow(/--since .* is after --until/);
  });
});
