import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSetupSettings } from '../../../src/config.js';
import { expectedSubscriptions, requiredIndexedPaths } from '../../../src/doctor/index.js';

/** The doctor's expectations are written in src/ (the app must not read infra/ at run time): they must say what infra/ creates. */
const root = join(__dirname, '..', '..', '..');

describe("the doctor's expectations", () => {
  it('are the order-events subscriptions and rules of infra/servicebus-queues.json', () => {
    const file = JSON.parse(readFileSync(join(root, 'infra', 'servicebus-queues.json'), 'utf8')) as {
      topics: Record<
        string,
        {
          subscriptions: Record<
            string,
            { requiresSession?: boolean; rules: Record<string, { sqlFilter?: string; correlationFilter?: Record<string, string> }> }
          >;
        }
      >;
    };
    const inFile = Object.entries(file.topics['order-events']?.subscriptions ?? {}).map(([name, s]) => ({
      name,
      requiresSession: s.requiresSession ?? false,
      rules: Object.entries(s.rules).map(([ruleName, r]) =>
        r.sqlFilter ? { name: ruleName, sqlExpression: r.sqlFilter } : { name: ruleName, correlation: r.correlationFilter },
      ),
    }));
    const expected = expectedSubscriptions(loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders' })).map(({ name, requiresSession, rules }) => ({
      name,
      requiresSession,
      rules,
    }));
    expect(expected).toEqual(inFile);
  });

  it('are the included paths of the orders container in infra/modules/cosmos.bicep', () => {
    const bicep = readFileSync(join(root, 'infra', 'modules', 'cosmos.bicep'), 'utf8');
    const included = /includedPaths: \[([\s\S]*?)\n\s*\]/.exec(bicep)?.[1] ?? '';
    expect([...included.matchAll(/\{ path: '([^']+)' \}/g)].map((m) => m[1])).toEqual(requiredIndexedPaths);
  });
});
