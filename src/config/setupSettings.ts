import { deepFreeze, parseOrThrow } from './environment.js';
import type { Environment } from './environment.js';
import { queueSettingsOf } from './settings.js';
import type { Settings } from './settings.js';
import { settingsSchema } from './settingsSchema.js';

/** The settings that name the resources the app uses and mirror the queue's properties: what `npm run doctor` compares a namespace and an account with. */
export interface SetupSettings {
  readonly ordersQueueName: string;
  readonly orderEventsTopicName: string;
  readonly fulfilmentSubscriptionName: string;
  readonly cosmos: { readonly databaseName: string; readonly ordersContainerName: string; readonly leasesContainerName: string };
  readonly markerTtlSeconds: number;
  readonly retryBudgetSeconds: number;
  readonly queue: Settings['queue'];
}

/** Exported for the check that the settings reference says the operator tool reads them. */
export const setupSettingNames = {
  ORDERS_QUEUE_NAME: true,
  ORDER_EVENTS_TOPIC_NAME: true,
  FULFILMENT_SUBSCRIPTION_NAME: true,
  COSMOS_DATABASE: true,
  COSMOS_ORDERS_CONTAINER: true,
  COSMOS_LEASES_CONTAINER: true,
  INBOX_MARKER_TTL_SECONDS: true,
  QUEUE_MAX_DELIVERY_COUNT: true,
  QUEUE_LOCK_DURATION_SECONDS: true,
  LOCK_RENEWAL_MAX_SECONDS: true,
  QUEUE_MESSAGE_TTL_SECONDS: true,
  DLQ_RESUBMIT_HORIZON_SECONDS: true,
  TRANSIENT_RETRY_BUDGET_SECONDS: true,
} as const;

/**
 * Reads only those settings, with the same rules and defaults as `loadSettings`, but without the
 * retention check: the doctor runs that rule itself on the queue's real properties.
 */
export function loadSetupSettings(env: Environment): Readonly<SetupSettings> {
  const s = parseOrThrow(settingsSchema().pick(setupSettingNames), env);
  return deepFreeze({
    ordersQueueName: s.ORDERS_QUEUE_NAME,
    orderEventsTopicName: s.ORDER_EVENTS_TOPIC_NAME,
    fulfilmentSubscriptionName: s.FULFILMENT_SUBSCRIPTION_NAME,
    cosmos: { databaseName: s.COSMOS_DATABASE, ordersContainerName: s.COSMOS_ORDERS_CONTAINER, leasesContainerName: s.COSMOS_LEASES_CONTAINER },
    markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    retryBudgetSeconds: s.TRANSIENT_RETRY_BUDGET_SECONDS,
    queue: queueSettingsOf(s),
  });
}
