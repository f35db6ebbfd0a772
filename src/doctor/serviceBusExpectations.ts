import type { SetupSettings } from '../config.js';

/** A rule a subscription must have: a SQL filter, or a correlation filter on these fields. */
export type ExpectedRule =
  { readonly name: string; readonly sqlExpression: string } | { readonly name: string; readonly correlation: Readonly<Record<string, string>> };

export interface ExpectedSubscription {
  readonly name: string;
  readonly requiresSession: boolean;
  /** Why sessions must be on or off, for the fix text. */
  readonly sessionReason: string;
  readonly rules: readonly ExpectedRule[];
}

/** The subscription that is not a setting: subscribers that need an order's events in order read it (infra/servicebus-queues.json). */
export const auditSubscriptionName = 'audit';

/**
 * The `order-events` subscriptions and their rules, as infra/servicebus-queues.json creates them
 * (a test keeps the two equal). `fulfilment` takes OrderAccepted addressed to nobody, and the
 * delayed-retry copies requestShipment sends to the topic addressed (`to`) to this subscription;
 * `audit` takes every event addressed to nobody, a session per order.
 */
export function expectedSubscriptions(settings: Pick<SetupSettings, 'fulfilmentSubscriptionName'>): readonly ExpectedSubscription[] {
  return [
    {
      name: settings.fulfilmentSubscriptionName,
      requiresSession: false,
      sessionReason: "requestShipment's trigger reads it without sessions",
      rules: [
        { name: 'order-accepted', sqlExpression: "sys.Label = 'OrderAccepted' AND sys.To IS NULL" },
        { name: 'retries', correlation: { to: settings.fulfilmentSubscriptionName } },
      ],
    },
    {
      name: auditSubscriptionName,
      requiresSession: true,
      sessionReason: "its readers take one order's events in order: the outbox sets the session to the order id",
      rules: [{ name: 'events', sqlExpression: 'sys.To IS NULL' }],
    },
  ];
}
