import { describe, expect, it } from 'vitest';
import { applyRuleAction, parseRuleAction } from '../ruleActions.js';
import { SqlFilterSyntaxError } from '../sqlSyntax.js';
import { sqlFilter } from '../subscriptionRules.js';
import { subscriptionCopies } from '../topicEntity.js';

const message = { message_id: 'm-1', subject: 'PaymentReceived', application_properties: { quantity: 10, priority: 'low', Secret: 's' } };

describe('a SQL rule action', () => {
  it('sets user properties by default and system ones with sys., computed on the message as it goes', () => {
    const action = parseRuleAction("SET quantity = quantity / 2; SET sys.Label = 'Half'; SET total = quantity * 3");
    const changed = applyRuleAction(action, message);
    expect(changed.application_properties).toEqual({ quantity: 5, priority: 'low', Secret: 's', total: 15 });
    expect(changed.subject).toBe('Half');
  });

  it('removes a property, finds an existing one whatever its case, and takes , or ; between statements', () => {
    const changed = applyRuleAction(parseRuleAction("REMOVE secret, SET user.[Priority] = 'high';"), message);
    expect(changed.application_properties).toEqual({ quantity: 10, priority: 'high' });
    expect(applyRuleAction(parseRuleAction('REMOVE sys.CorrelationId'), { ...message, correlation_id: 'c' }).correlation_id).toBeUndefined();
  });

  it("keeps a ',' or ';' inside a string, and leaves the sender's message as it was", () => {
    const changed = applyRuleAction(parseRuleAction("SET note = 'a, b; c'"), message);
    expect(changed.application_properties?.note).toBe('a, b; c');
    expect(message.application_properties).toEqual({ quantity: 10, priority: 'low', Secret: 's' });
  });

  it.each([
    ['', 'an action has at least one SET or REMOVE statement'],
    ['UPDATE quantity', 'is not SET <property> = <expression> or REMOVE <property>'],
    ['SET quantity', 'needs "= <expression>"'],
    ['SET quantity = ', 'needs "= <expression>"'],
    ['REMOVE quantity = 1', 'REMOVE takes a property alone'],
    ['SET quantity = 1 > 0', 'takes a value, not a condition'],
  ])('refuses %j, saying why', (expression, problem) => {
    expect(() => parseRuleAction(expression)).toThrow(SqlFilterSyntaxError);
    expect(() => parseRuleAction(expression)).toThrow(problem);
  });
});

describe("a subscription's copies of a message", () => {
  const byColour = { name: 'blue', filter: sqlFilter("Colour = 'blue'") };
  const flagged = { name: 'flag', filter: { kind: 'true' as const }, action: parseRuleAction("SET priority = 'high'") };
  const blue = { ...message, application_properties: { colour: 'blue' } };

  it('is one for any number of matching rules without an action', () => {
    expect(subscriptionCopies([byColour, { name: 'all', filter: { kind: 'true' } }], blue)).toEqual([blue]);
  });

  it('is one more per matching rule with an action, changed by it and named by the rule', () => {
    const copies = subscriptionCopies([byColour, flagged], blue);
    expect(copies.map((c) => c.application_properties)).toEqual([{ colour: 'blue' }, { colour: 'blue', priority: 'high', RuleName: 'flag' }]);
  });

  it('is none when no rule matches', () => {
    expect(subscriptionCopies([byColour], message)).toEqual([]);
  });
});
