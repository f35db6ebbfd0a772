import type { AmqpMessage } from './entityTypes.js';
import { evaluatePredicate, systemFields } from './sqlEvaluator.js';
import { parseSqlFilter } from './sqlParser.js';
import type { Expression, Predicate, PropertyReference } from './sqlSyntax.js';

/**
 * A subscription rule's filter as Service Bus has them: the `$Default` rule's TrueFilter, a
 * CorrelationFilter (every field given must equal the message's), or a SqlFilter (a SQL-92 subset
 * over system and user properties: sqlTokenizer.ts, sqlParser.ts, sqlEvaluator.ts). A rule may
 * carry a SQL action (`SET`/`REMOVE`, see ruleActions.ts).
 */
export type RuleFilter =
  | { readonly kind: 'true' }
  | { readonly kind: 'false' }
  | { readonly kind: 'correlation'; readonly fields: CorrelationFields }
  | { readonly kind: 'sql'; readonly expression: string; readonly predicate: Predicate };

export interface CorrelationFields {
  readonly correlationId?: string;
  readonly messageId?: string;
  readonly to?: string;
  readonly replyTo?: string;
  readonly subject?: string;
  readonly sessionId?: string;
  readonly replyToSessionId?: string;
  readonly contentType?: string;
  readonly applicationProperties?: Readonly<Record<string, string | number | boolean | Date>>;
}

export interface SubscriptionRule {
  readonly name: string;
  readonly filter: RuleFilter;
  /** Applied to the subscription's copy of a message this rule matched. */
  readonly action?: RuleAction;
}

/** A parsed SQL rule action, with its text as given. */
export interface RuleAction {
  readonly expression: string;
  readonly statements: readonly ActionStatement[];
}

export type ActionStatement =
  { readonly op: 'set'; readonly property: PropertyReference; readonly value: Expression } | { readonly op: 'remove'; readonly property: PropertyReference };

/** What a subscription has when nobody gave it rules: `$Default`, matching every message. */
export const defaultRule: SubscriptionRule = { name: '$Default', filter: { kind: 'true' } };

export function sqlFilter(expression: string): RuleFilter {
  return { kind: 'sql', expression, predicate: parseSqlFilter(expression) };
}

/** A message reaches a subscription when any of its rules matches (none: it gets nothing). */
export function subscriptionAccepts(rules: readonly SubscriptionRule[], message: AmqpMessage): boolean {
  return rules.some((rule) => filterMatches(rule.filter, message));
}

export function filterMatches(filter: RuleFilter, message: AmqpMessage): boolean {
  switch (filter.kind) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'correlation':
      return correlationMatches(filter.fields, message);
    case 'sql':
      return evaluatePredicate(filter.predicate, message) === true;
  }
}

function correlationMatches(fields: CorrelationFields, message: AmqpMessage): boolean {
  const { applicationProperties, ...system } = fields;
  for (const [name, want] of Object.entries(system)) {
    if (want === undefined) continue;
    const field = systemFields[name.toLowerCase()];
    if (field === undefined || String(message[field] ?? '') !== want || message[field] === undefined) return false;
  }
  const props = (message.application_properties ?? {}) as Record<string, unknown>;
  for (const [name, want] of Object.entries(applicationProperties ?? {})) if (!sameValue(props[name], want)) return false;
  return true;
}

function sameValue(have: unknown, want: string | number | boolean | Date): boolean {
  if (want instanceof Date) return have instanceof Date && have.getTime() === want.getTime();
  return have === want;
}
