import type { ServiceBusMessage } from '@azure/service-bus';
import { routeCopy } from './copyDelivery.js';
import type { DlqContext } from './dlqCommands.js';

export type RoutedEdit =
  { readonly kind: 'routed'; readonly copy: ServiceBusMessage; readonly detail: string } | { readonly kind: 'refused'; readonly why: string };

/**
 * Where an edited copy of a subscription's dead letter goes, proven on the subscription's rules as a
 * plain resubmit's copy is (routeCopy). Stricter than a plain resubmit in one way: a copy addressed to
 * nobody reaches every subscription of the topic, and a plain copy keeps its key, which they absorb;
 * an edit travels under a new key (`~edit-<n>`) none of them has seen, so each would apply it. An
 * edit goes only addressed to its subscription.
 */
export function routeEditedCopy(ctx: Pick<DlqContext, 'route' | 'resubmitTo'>, copy: ServiceBusMessage): RoutedEdit {
  const addressed = (to: string | undefined): ServiceBusMessage => (to === undefined ? copy : { ...copy, to });
  if (!ctx.route) return { kind: 'routed', copy: addressed(ctx.resubmitTo), detail: '' };
  const routed = routeCopy(ctx.route, addressed);
  if (routed.kind === 'refused') return { kind: 'refused', why: routed.why };
  const where = `${ctx.route.topic}/subscriptions/${ctx.route.subscription}`;
  if (routed.to === undefined)
    return {
      kind: 'refused',
      why: `not sent: ${where} takes a copy only addressed to nobody (rule ${routed.rule}), so every subscription of ${ctx.route.topic} would get it, and an edited copy travels under a new key none of them has seen: each would apply it. Give ${where} a rule taking sys.To = '${ctx.route.subscription}', or correct the message at its producer`,
    };
  return { kind: 'routed', copy: addressed(routed.to), detail: `; to ${routed.to}, taken by rule ${routed.rule} of ${ctx.route.subscription}` };
}
