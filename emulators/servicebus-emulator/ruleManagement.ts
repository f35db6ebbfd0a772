import rhea from 'rhea';
import type { ManagementReply } from './management.js';
import { parseRuleAction } from './ruleActions.js';
import { SqlFilterSyntaxError } from './sqlSyntax.js';
import { sqlFilter } from './subscriptionRules.js';
import type { CorrelationFields, RuleFilter, SubscriptionRule } from './subscriptionRules.js';
import type { TopicSubscription } from './topicEntity.js';

const { types } = rhea;

/** The described-type codes Service Bus answers `enumerate-rules` with (the SDKs decode by them). */
const descriptor = {
  ruleDescription: 0x0000013700000004,
  sqlFilter: 0x000001370000006,
  trueFilter: 0x000001370000007,
  falseFilter: 0x000001370000008,
  correlationFilter: 0x000001370000009,
  emptyRuleAction: 0x0000013700000005,
  sqlRuleAction: 0x0000013700000006,
} as const;

/** Service Bus's limit on a rule name. */
const maxRuleNameLength = 50;

/** SQL compatibility level Service Bus reports for every SQL filter and action. */
const compatibilityLevel = 20;

type Body = Record<string, unknown>;

/**
 * The rule manager's `$management` operations on a subscription (`ServiceBusRuleManager`):
 * `add-rule` (a SQL or correlation filter, with an optional SQL action; a taken name is 409),
 * `remove-rule` (an unknown name is 404) and `enumerate-rules` (by name, skip/top, 204 when there are none).
 * Undefined for any other operation.
 */
export function handleRuleRequest(operation: unknown, body: Body, subscription: TopicSubscription, path: string): ManagementReply | undefined {
  switch (operation) {
    case 'com.microsoft:add-rule':
      return addRule(body, subscription, path);
    case 'com.microsoft:remove-rule':
      return removeRule(body, subscription, path);
    case 'com.microsoft:enumerate-rules':
      return enumerateRules(body, subscription);
    default:
      return undefined;
  }
}

function addRule(body: Body, subscription: TopicSubscription, path: string): ManagementReply {
  const name = body['rule-name'];
  if (typeof name !== 'string' || name === '' || name.length > maxRuleNameLength) {
    return badRequest(`A rule name is 1 to ${maxRuleNameLength} characters; got ${JSON.stringify(name)}.`);
  }
  if (subscription.rules.some((r) => r.name.toLowerCase() === name.toLowerCase())) {
    return { status: 409, condition: 'com.microsoft:entity-already-exists', description: `The messaging entity '${path}/Rules/${name}' already exists.` };
  }
  const description = (body['rule-description'] ?? {}) as Body;
  let rule: SubscriptionRule;
  try {
    rule = { name, filter: filterOf(description), ...actionOf(description) };
  } catch (error) {
    if (error instanceof SqlFilterSyntaxError || error instanceof RuleDescriptionError) return badRequest(error.message);
    throw error;
  }
  subscription.rules = [...subscription.rules, rule];
  return { status: 200, body: {} };
}

function removeRule(body: Body, subscription: TopicSubscription, path: string): ManagementReply {
  const name = String(body['rule-name'] ?? '');
  const kept = subscription.rules.filter((r) => r.name.toLowerCase() !== name.toLowerCase());
  if (kept.length === subscription.rules.length) {
    return { status: 404, condition: 'amqp:not-found', description: `The messaging entity '${path}/Rules/${name}' could not be found.` };
  }
  subscription.rules = kept;
  return { status: 200, body: {} };
}

function enumerateRules(body: Body, subscription: TopicSubscription): ManagementReply {
  const skip = Math.max(0, Number(body.skip ?? 0) || 0);
  const top = Math.max(0, Number(body.top ?? subscription.rules.length) || 0);
  // Service Bus lists a subscription's rules by name, whatever order they were added in.
  const byName = [...subscription.rules].sort((a, b) => compareNames(a.name, b.name));
  const page = byName.slice(skip, skip + top);
  if (page.length === 0) return { status: 204, body: {} };
  return { status: 200, body: { rules: page.map((rule) => ({ 'rule-description': describeRule(rule) })) } };
}

function compareNames(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  return x < y ? -1 : x > y ? 1 : 0;
}

class RuleDescriptionError extends Error {
  override readonly name = 'RuleDescriptionError';
}

function filterOf(description: Body): RuleFilter {
  const sql = description['sql-filter'] as Body | undefined;
  if (sql) {
    if (typeof sql.expression !== 'string' || sql.expression.trim() === '') throw new RuleDescriptionError('A SQL filter needs an expression.');
    return sqlFilter(sql.expression);
  }
  const correlation = description['correlation-filter'] as Body | undefined;
  if (correlation) return { kind: 'correlation', fields: correlationFieldsOf(correlation) };
  throw new RuleDescriptionError('A rule needs a sql-filter or a correlation-filter.');
}

function actionOf(description: Body): { action?: SubscriptionRule['action'] } {
  const action = description['sql-rule-action'] as Body | undefined;
  if (!action) return {};
  if (typeof action.expression !== 'string' || action.expression.trim() === '') throw new RuleDescriptionError('A SQL rule action needs an expression.');
  return { action: parseRuleAction(action.expression) };
}

const correlationKeys: Readonly<Record<string, keyof Omit<CorrelationFields, 'applicationProperties'>>> = {
  'correlation-id': 'correlationId',
  'message-id': 'messageId',
  to: 'to',
  'reply-to': 'replyTo',
  label: 'subject',
  'session-id': 'sessionId',
  'reply-to-session-id': 'replyToSessionId',
  'content-type': 'contentType',
};

function correlationFieldsOf(correlation: Body): CorrelationFields {
  const fields: Record<string, unknown> = {};
  for (const [wire, field] of Object.entries(correlationKeys)) {
    const v = correlation[wire];
    if (v !== undefined && v !== null) fields[field] = String(v);
  }
  const properties = correlation.properties;
  if (properties && typeof properties === 'object') fields.applicationProperties = { ...(properties as Record<string, string | number | boolean | Date>) };
  if (Object.keys(fields).length === 0) throw new RuleDescriptionError('A correlation filter needs at least one property to match.');
  return fields as CorrelationFields;
}

function describeRule(rule: SubscriptionRule): unknown {
  const action = rule.action
    ? types.described(
        types.wrap_ulong(descriptor.sqlRuleAction),
        types.wrap_list([types.wrap_string(rule.action.expression), types.wrap_int(compatibilityLevel)]),
      )
    : types.described(types.wrap_ulong(descriptor.emptyRuleAction), types.wrap_list([]));
  return types.described(types.wrap_ulong(descriptor.ruleDescription), types.wrap_list([describeFilter(rule.filter), action, types.wrap_string(rule.name)]));
}

function describeFilter(filter: RuleFilter): unknown {
  switch (filter.kind) {
    case 'true':
      return types.described(types.wrap_ulong(descriptor.trueFilter), types.wrap_list([]));
    case 'false':
      return types.described(types.wrap_ulong(descriptor.falseFilter), types.wrap_list([]));
    case 'sql':
      return types.described(
        types.wrap_ulong(descriptor.sqlFilter),
        types.wrap_list([types.wrap_string(filter.expression), types.wrap_int(compatibilityLevel)]),
      );
    case 'correlation': {
      const f = filter.fields;
      const text = (v: string | undefined) => (v === undefined ? null : types.wrap_string(v));
      // Service Bus always sends the properties map (empty when the filter names none); the SDK fails on a null there.
      const props = types.wrap_map((f.applicationProperties ?? {}) as Record<string, unknown>);
      return types.described(
        types.wrap_ulong(descriptor.correlationFilter),
        types.wrap_list([
          text(f.correlationId),
          text(f.messageId),
          text(f.to),
          text(f.replyTo),
          text(f.subject),
          text(f.sessionId),
          text(f.replyToSessionId),
          text(f.contentType),
          props,
        ]),
      );
    }
  }
}

function badRequest(description: string): ManagementReply {
  return { status: 400, condition: 'amqp:invalid-field', description };
}
