import { describe, expect, it } from 'vitest';
import { routeCopy } from '../../../src/cli/copyDelivery.js';
import type { SubscriptionRoute } from '../../../src/cli/copyDelivery.js';
import { matchesFilter, UnsupportedFilterError } from '../../../src/cli/subscriptionFilter.js';
import { loadQueueFile } from '../../../emulators/servicebus-emulator/index.js';

const event = { body: {}, subject: 'OrderAccepted', sessionId: 'o-1', applicationProperties: { region: 'eu', attempt: 2 } };
const sql = (sqlExpression: string) => ({ sqlExpression });

describe('the SQL filters a subscription rule may hold', () => {
  it.each([
    ['1=1', true],
    ['1=0', false],
    ["sys.Label = 'OrderAccepted' AND sys.To IS NULL", true],
    ["sys.Label = 'OrderAccepted' AND sys.To = 'audit'", false],
    ['sys.To IS NULL', true],
    ['sys.To IS NOT NULL', false],
    ["region = 'eu' AND user.attempt = 2", true],
    ["NOT (region <> 'eu') OR sys.To = 'x'", true],
    ["sys.Label != 'OrderAccepted'", false],
    ["missing = 'x'", false],
    ["NOT missing = 'x'", false],
    ["sys.subject = 'It''s'", false],
  ])('%s -> %s', (expression, expected) => {
    expect(matchesFilter(sql(expression), event)).toBe(expected);
  });

  it.each([
    ["sys.Label LIKE 'Order%'"],
    ["region IN ('eu')"],
    ['sys.EnqueuedTimeUtc IS NULL'],
    ['attempt > 1'],
    ['EXISTS(region)'],
    ['(sys.To IS NULL'],
    ['sys.To = @to'],
  ])('refuses %s rather than guess', (expression) => {
    expect(() => matchesFilter(sql(expression), event)).toThrow(UnsupportedFilterError);
  });

  it('refuses parameters and a filter nested past its bound, without overflowing the stack', () => {
    expect(() => matchesFilter({ sqlExpression: 'sys.To = @to', sqlParameters: { '@to': 'x' } }, event)).toThrow(/parameters/);
    expect(() => matchesFilter(sql(`${'('.repeat(1000)}1=1${')'.repeat(1000)}`), event)).toThrow(UnsupportedFilterError);
    expect(() => matchesFilter(sql(`${'('.repeat(40)}1=1${')'.repeat(40)}`), event)).toThrow(/nested deeper than 32/);
  });
});

describe('correlation filters', () => {
  it('match when every named property is equal', () => {
    expect(matchesFilter({ to: 'fulfilment' }, { ...event, to: 'fulfilment' })).toBe(true);
    expect(matchesFilter({ to: 'fulfilment' }, event)).toBe(false);
    expect(matchesFilter({ subject: 'OrderAccepted', applicationProperties: { region: 'eu' } }, event)).toBe(true);
    expect(matchesFilter({ subject: 'OrderAccepted', applicationProperties: { region: 'us' } }, event)).toBe(false);
    expect(() => matchesFilter({}, event)).toThrow(UnsupportedFilterError);
  });
});

/** The rules of infra/servicebus-queues.json, as the rule manager lists them. */
function routeOf(subscription: string): SubscriptionRoute {
  const rules = Object.entries(loadQueueFile().topics['order-events']?.subscriptions[subscription]?.rules ?? {}).map(([name, rule]) => ({
    name,
    filter: 'sqlFilter' in rule ? sql(rule.sqlFilter) : rule.correlationFilter,
  }));
  return { topic: 'order-events', subscription, rules };
}

describe('where a resubmitted copy goes', () => {
  const copy = (to: string | undefined) => ({ ...event, ...(to === undefined ? {} : { to }) });

  it('fulfilment: addressed to it (its retries rule)', () => {
    expect(routeCopy(routeOf('fulfilment'), copy)).toEqual({ kind: 'routed', to: 'fulfilment', rule: 'retries' });
  });

  it('audit: addressed to nobody, as the original was (its events rule takes only that)', () => {
    expect(routeCopy(routeOf('audit'), copy)).toEqual({ kind: 'routed', to: undefined, rule: 'events' });
  });

  it('refuses, naming the rules, when no rule takes the copy', () => {
    const route = { topic: 't', subscription: 's', rules: [{ name: 'only-paid', filter: sql("sys.Label = 'OrderPaid'") }] };
    expect(routeCopy(route, copy)).toEqual({
      kind: 'refused',
      why: expect.stringMatching(/no rule of t\/subscriptions\/s takes the copy.*only-paid: sys.Label = 'OrderPaid'/),
    });
  });

  it('refuses when a rule it cannot evaluate might be the one that takes it', () => {
    const route = { topic: 't', subscription: 's', rules: [{ name: 'like', filter: sql("sys.Label LIKE 'Order%'") }] };
    expect(routeCopy(route, copy)).toEqual({ kind: 'refused', why: expect.stringMatching(/cannot prove t\/subscriptions\/s would get the copy.*rule like/) });
  });
});
