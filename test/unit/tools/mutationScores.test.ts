import { describe, expect, it } from 'vitest';
import { check } from '../../../tools/mutation/scores.cjs';

const mutants = (counts: Record<string, number>) => Object.entries(counts).flatMap(([status, n]) => Array.from({ length: n }, () => ({ status })));

describe('the mutation bar (tools/mutation/scores.cjs)', () => {
  it('passes a folder at 90 % whose files are each at least 80 %', () => {
    const { failures, lines } = check({
      files: {
        'src/orders/a.ts': { mutants: mutants({ Killed: 8, Survived: 2 }) },
        'src/orders/b.ts': { mutants: mutants({ Killed: 9, Timeout: 1 }) },
      },
    });
    expect(failures).toEqual([]);
    expect(lines).toContain('  90.0 %  src/orders  (18 of 20 detected)');
  });

  it('fails a folder below 90 % and a file below 80 %, naming each', () => {
    const { failures } = check({
      files: {
        'src/orders/a.ts': { mutants: mutants({ Killed: 7, Survived: 3 }) },
        'src/orders/b.ts': { mutants: mutants({ Killed: 10 }) },
      },
    });
    expect(failures).toEqual(['src/orders: 85.0 % is below 90 % for a folder', 'src/orders/a.ts: 70.0 % is below 80 % for a file']);
  });

  it('counts mutants no test reached as undetected, and leaves excluded ones out of the score', () => {
    const { failures, lines } = check({ files: { 'src/config.ts': { mutants: mutants({ Killed: 9, NoCoverage: 1, Ignored: 5 }) } } });
    expect(lines[0]).toBe('  90.0 %  src/config.ts  (9 of 10 detected, 5 excluded)');
    expect(failures).toEqual([]);
    expect(check({ files: { 'src/config.ts': { mutants: mutants({ Killed: 8, NoCoverage: 2 }) } } }).failures).toEqual([
      'src/config.ts: 80.0 % is below 90 % for a folder',
    ]);
  });
});
