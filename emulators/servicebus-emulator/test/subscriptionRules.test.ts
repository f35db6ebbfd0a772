import { describe, expect, it } from 'vitest';
import { SqlFilterSyntaxError } from '../sqlSyntax.js';
import { filterMatches, sqlFilter, subscriptionAccepts } from '../subscriptionRules.js';
import type { RuleFilter } from '../subscriptionRules.js';

const message = {
  message_id: 'm-1',
  correlation_id: 'c-9',
  subject: 'PaymentReceived',
  content_type: 'application/json',
  group_id: 'o-42',
  application_properties: { amount: 150, currency: 'EUR', region: 'eu-west', vip: true, note: '50%_off' },
};
const sql = (expression: string) => filterMatches(sqlFilter(expression), message);

describe('SQL filters, as Service Bus evaluates them', () => {
  it.each([
    ["sys.Label = 'PaymentReceived'", true],
    ["sys.label = 'PaymentReceived'", true],
    ["sys.Subject <> 'PaymentReceived'", false],
    ['amount > 100', true],
    ['amount >= 150 AND amount <= 150', true],
    ['amount < 100', false],
    ["currency = 'EUR' AND (amount < 10 OR vip = TRUE)", true],
    ["currency = 'USD' OR amount > 100 AND vip = FALSE", false],
    ["NOT currency = 'USD'", true],
    ["currency IN ('USD', 'EUR')", true],
    ["currency NOT IN ('USD', 'EUR')", false],
    ["region LIKE 'eu-%'", true],
    ["region LIKE 'eu_west'", true],
    ["region NOT LIKE 'us%'", true],
    ["note LIKE '50!%!_off' ESCAPE '!'", true],
    ["note LIKE '50!%x' ESCAPE '!'", false],
    ['EXISTS(amount)', true],
    ['EXISTS(discount)', false],
    ['discount IS NULL', true],
    ['amount IS NOT NULL', true],
    ['amount * 2 - 100 = 200', true],
    ['-amount < 0', true],
    ['amount % 100 = 50', true],
    ["sys.SessionId = 'o-42' AND sys.CorrelationId = 'c-9' AND sys.MessageId = 'm-1'", true],
    ["[currency] = 'EUR'", true],
    ["user.currency = 'EUR'", true],
    ['1 = 1', true],
    ['vip', true],
  ])('%s -> %s', (expression, expected) => {
    expect(sql(expression)).toBe(expected);
  });

  it('treats a missing property as NULL: a comparison with it is unknown, and neither it nor its negation matches', () => {
    expect(sql('discount > 5')).toBe(false);
    expect(sql('NOT discount > 5')).toBe(false);
    expect(sql('discount > 5 OR amount > 100')).toBe(true);
    expect(sql('discount > 5 AND amount > 100')).toBe(false);
    expect(sql("discount IN ('a')")).toBe(false);
  });

  it('never matches across types: a number is not equal to its text', () => {
    expect(sql("amount = '150'")).toBe(false);
    expect(sql('currency > 1')).toBe(false);
  });

  it('refuses what Service Bus refuses when the rule is created, saying where', () => {
    expect(() => sqlFilter("currency = 'EUR")).toThrow(new SqlFilterSyntaxError("currency = 'EUR", 'a string is not closed'));
    expect(() => sqlFilter('amount >')).toThrow(/it ends too early/);
    expect(() => sqlFilter('amount > 1 1')).toThrow(/unexpected "1" at 11/);
    expect(() => sqlFilter('amount IS 5')).toThrow(/IS must be followed by \[NOT\] NULL/);
    expect(() => sqlFilter('region LIKE 5')).toThrow(/LIKE takes a string pattern/);
    expect(() => sqlFilter('amount ~ 1')).toThrow(/unexpected "~" at 7/);
    expect(() => sqlFilter('')).toThrow(/it is empty/);
  });
});

describe('correlation filters and rule sets', () => {
  const correlation = (fields: Extract<RuleFilter, { kind: 'correlation' }>['fields']): RuleFilter => ({ kind: 'correlation', fields });

  it("match when every field given equals the message's, application properties included", () => {
    expect(filterMatches(correlation({ subject: 'PaymentReceived' }), message)).toBe(true);
    expect(filterMatches(correlation({ subject: 'PaymentReceived', correlationId: 'c-9', sessionId: 'o-42', contentType: 'application/json' }), message)).toBe(
      true,
    );
    expect(filterMatches(correlation({ subject: 'paymentreceived' }), message)).toBe(false);
    expect(filterMatches(correlation({ subject: 'PaymentReceived', applicationProperties: { currency: 'EUR', amount: 150 } }), message)).toBe(true);
    expect(filterMatches(correlation({ applicationProperties: { amount: '150' } }), message)).toBe(false);
    expect(filterMatches(correlation({ to: 'anyone' }), message)).toBe(false);
  });

  it('let a message through when any rule matches, and not at all when a subscription has none', () => {
    const rules = [
      { name: 'eu', filter: sqlFilter("currency = 'USD'") },
      { name: 'big', filter: sqlFilter('amount > 100') },
    ];
    expect(subscriptionAccepts(rules, message)).toBe(true);
    expect(subscriptionAccepts(rules.slice(0, 1), message)).toBe(false);
    expect(subscriptionAccepts([], message)).toBe(false);
    expect(subscriptionAccepts([{ name: 'none', filter: { kind: 'false' } }], message)).toBe(false);
  });
});
