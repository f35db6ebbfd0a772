import { describe, expect, it } from 'vitest';
import { effectProblem } from '../../../bench/hostEffects.js';
import { hostPaths, selectPaths } from '../../../bench/hostPaths.js';
import { hostReport } from '../../../bench/hostReport.js';
import type { DrainResult } from '../../../bench/hostDrain.js';

const drained = (ms: number, problems: string[] = []): DrainResult => ({
  messages: 100,
  ms,
  window: [0, ms],
  deliveries: 100,
  failed: 0,
  deadLettered: 0,
  cpuMs: 150,
  problems,
});

describe('npm run bench -- --host: its parts', () => {
  it('--paths takes a comma list of names that hold commas themselves, or all', () => {
    expect(selectPaths('OrderPlaced, new').map((p) => p.name)).toEqual(['OrderPlaced, new']);
    expect(selectPaths('PaymentReceived, new,OrderPlaced, new').map((p) => p.name)).toEqual(['OrderPlaced, new', 'PaymentReceived, new']);
    expect(selectPaths('all')).toEqual(hostPaths);
    expect(() => selectPaths('OrderPlaced, old')).toThrow(/no path is named "OrderPlaced, old"; the paths are: OrderPlaced, new; /);
    expect(() => selectPaths('OrderPlaced, new,nonsense')).toThrow(/no path is named "nonsense"/);
  });

  it("checks each order's effect: once, and nothing else", () => {
    const order = (amountPaid = 0, customerId = 'c') => ({ docType: 'order', amountPaid, customerId });
    expect(effectProblem('placed', [order(), { docType: 'outbox' }, { docType: 'parking-lot' }])).toBeUndefined();
    expect(effectProblem('placed', [order(), { docType: 'outbox' }, { docType: 'outbox' }])).toBe('1 orders, 2 outbox entries');
    expect(effectProblem('paid', [order(1)])).toBeUndefined();
    expect(effectProblem('paid', [order(2)])).toBe('1 orders, amountPaid 2');
    expect(effectProblem('parked', [{ docType: 'parked' }, { docType: 'parking-lot' }])).toBeUndefined();
    expect(effectProblem('parked', [{ docType: 'parked' }, { docType: 'parked' }])).toBe('0 orders, 2 parked items');
    expect(effectProblem('unchanged', [order(), { docType: 'outbox' }, { docType: 'conflict' }])).toBeUndefined();
    expect(effectProblem('unchanged', [order(0, 'other'), { docType: 'outbox' }])).toBe('1 orders (customer other), 1 outbox entries');
    expect(effectProblem('none', [])).toBeUndefined();
    expect(effectProblem('none', [order()])).toBe('1 documents');
  });

  it('prints medians, the ratio, the paired ratio of every round, CPU per message, and fails on a problem', () => {
    const { lines, ok } = hostReport({ messages: 100, rounds: 3, maxConcurrentCalls: 16 }, [
      {
        path: 'OrderPlaced, new',
        layout: 'separate',
        note: 'the app writes one more document',
        rounds: [
          { app: drained(200), bare: drained(100) },
          { app: drained(100), bare: drained(100) },
          { app: drained(125), bare: drained(100, ['b-1: 0 orders, 0 outbox entries']) },
        ],
      },
    ]);
    const output = lines.join('\n');
    expect(output).toMatch(
      / {2}OrderPlaced, new +separate +800\.0 +1000\.0 +0\.80x +0\.80x +1\.50 +1\.50 +1\.00x\n {4}rounds \(app \/ bare\): 0\.50, 1\.00, 0\.80\n/,
    );
    expect(output).toContain('  OrderPlaced, new: the app writes one more document.');
    expect(output).toContain('  ok   app separate OrderPlaced, new: 300 messages, 300 deliveries, 0 dead-lettered, 0 problems');
    expect(output).toContain(
      '  FAIL bare separate OrderPlaced, new: 300 messages, 300 deliveries, 0 dead-lettered, 1 problems: b-1: 0 orders, 0 outbox entries',
    );
    expect(ok).toBe(false);
  });
});
