import type { RuleProperties, ServiceBusClient, ServiceBusMessage } from '@azure/service-bus';
import { DlqSetupError, rolesFor } from './setupChecks.js';
import { matchesFilter, UnsupportedFilterError } from './subscriptionFilter.js';

/** A subscription's rules as the rule manager lists them: what decides whether the topic gives it a copy. */
export interface SubscriptionRoute {
  readonly topic: string;
  readonly subscription: string;
  readonly rules: readonly Pick<RuleProperties, 'name' | 'filter'>[];
}

/** At most this many rules are read: a subscription with more is not one this tool can vouch for. */
const maxRules = 100;

export async function readSubscriptionRoute(client: ServiceBusClient, topic: string, subscription: string): Promise<SubscriptionRoute> {
  const rules: Pick<RuleProperties, 'name' | 'filter'>[] = [];
  try {
    for await (const rule of client.createRuleManager(topic, subscription).listRules()) {
      if (rules.length >= maxRules)
        throw new DlqSetupError(`${topic}/subscriptions/${subscription} has more than ${maxRules} rules: the tool does not resubmit there`);
      rules.push({ name: rule.name, filter: rule.filter });
    }
  } catch (error) {
    if (error instanceof DlqSetupError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    const unauthorized = (error as { code?: unknown }).code === 'UnauthorizedAccess';
    throw new DlqSetupError(
      `reading the rules of ${topic}/subscriptions/${subscription} (to prove a copy will reach it) failed: ${detail}${unauthorized ? ` (grant ${rolesFor({ topic, subscription })})` : ''}`,
    );
  }
  return { topic, subscription, rules };
}

export type RoutedCopy = { readonly kind: 'routed'; readonly to?: string; readonly rule: string } | { readonly kind: 'refused'; readonly why: string };

/**
 * How the copy reaches the subscription it came from, proven on its rules before anything is sent:
 * addressed to it (`to`), which the project's `retries` rule gives to it alone, or, when no rule takes
 * that, addressed to nobody as the original was (other subscriptions whose rules match get it too,
 * and absorb it by the idempotency key it keeps). Refused when no rule is sure to take either, or a
 * rule cannot be evaluated here: the original then stays in the dead-letter queue.
 */
export function routeCopy(route: SubscriptionRoute, copy: (to: string | undefined) => ServiceBusMessage): RoutedCopy {
  const unreadable: string[] = [];
  for (const to of [route.subscription, undefined]) {
    const message = copy(to);
    for (const rule of route.rules) {
      try {
        if (matchesFilter(rule.filter, message)) return { kind: 'routed', to, rule: rule.name };
      } catch (error) {
        if (!(error instanceof UnsupportedFilterError)) throw error;
        unreadable.push(`rule ${rule.name}: ${error.message}`);
      }
    }
  }
  const where = `${route.topic}/subscriptions/${route.subscription}`;
  if (unreadable.length > 0) return { kind: 'refused', why: `not sent: cannot prove ${where} would get the copy (${[...new Set(unreadable)].join('; ')})` };
  const rules = route.rules.map((r) => `${r.name}: ${describeFilter(r.filter)}`).join('; ') || 'it has no rule';
  return { kind: 'refused', why: `not sent: no rule of ${where} takes the copy, addressed to it or to nobody, so the topic would drop it (${rules})` };
}

function describeFilter(filter: RuleProperties['filter']): string {
  return 'sqlExpression' in filter ? filter.sqlExpression : `correlation ${JSON.stringify(filter)}`;
}
