import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { runDemo } from '../../dev/local/runDemo.js';

let stack: LocalStack;
let functions: RegisteredFunction[];

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false, lockDurationMs: 2_000 });
  Object.assign(process.env, stack.settings);
  await import('../../functions/submitOrder.js');
  await import('../../functions/processOrder.js');
  await import('../../functions/publishOutbox.js');
  await import('../../functions/requestShipment.js');
  functions = ['submitOrder', 'processOrder', 'publishOutbox', 'requestShipment'].map(
    (name) =>
      registeredFunctions()
        .filter((f) => f.metadata.name === name)
        .slice(-1)[0]!,
  );
});
afterAll(() => stack.close());

describe('npm run local', () => {
  it('runs the sample workload to a summary with no duplicate effect and nothing lost', async () => {
    const lines: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => lines.push(args.join(' '));
    let ok: boolean;
    try {
      ok = await runDemo(stack, functions, 25);
    } finally {
      console.log = log;
    }
    console.log(lines.join('\n'));
    expect(lines.filter((l) => l.includes('FAIL'))).toEqual([]);
    expect(lines.join('\n')).toContain('No duplicate effect, nothing lost.');
    expect(lines.join('\n')).toMatch(/order documents\s+25 for 25 distinct orders/);
    expect(ok).toBe(true);
    // docs/local-stack.md shows the summary as this prints it, and the README its checks: the same rows and checks, in the same order.
    const labels = (text: string) =>
      text
        .split('\n')
        .filter((l) => /^ {2}\S/.test(l) && !/^ {2}deliveries \d/.test(l))
        .map((l) => l.replace(/\s{2,}\S.*$/, '').trim());
    const printed = lines.join('\n');
    const page = readFileSync('docs/local-stack.md', 'utf8');
    const shown = page.slice(page.indexOf('\nSummary\n'), page.indexOf('```', page.indexOf('\nSummary\n')));
    expect(labels(shown)).toEqual(labels(printed.slice(printed.indexOf('\nSummary\n'))));
    expect(labels(shown).length).toBeGreaterThan(15);
    const readme = readFileSync('README.md', 'utf8');
    const checks = readme.slice(readme.indexOf('\nChecks\n'), readme.indexOf('```', readme.indexOf('\nChecks\n')));
    const checkTexts = (text: string) => [...text.matchAll(/^ {2}(?:ok|FAIL)\s+(.+)$/gm)].map((m) => m[1]?.trim());
    expect(checkTexts(checks)).toEqual(checkTexts(printed.slice(printed.indexOf('\nChecks\n'))));
    expect(checkTexts(checks).length).toBeGreaterThan(8);
  }, 120_000);
});
