import type { RetryPolicy } from '../idempotency/index.js';
import type { CallerIdentityMode } from './intakeSettings.js';
import type { ParsedSettings } from './settingsSchema.js';

/** The app's settings as its parts take them: grouped by concern, durations in the unit each part uses. */
export interface Settings {
  readonly ordersQueueName: string;
  readonly cosmos: {
    readonly endpoint: string;
    readonly key?: string;
    readonly caCertificatePath?: string;
    readonly databaseName: string;
    readonly ordersContainerName: string;
  };
  readonly consumerName?: string;
  readonly markerTtlSeconds: number;
  readonly maxMessageBytes: number;
  readonly maxConcurrencyAttempts: number;
  /** How far one OrderStatusChanged may move an order's status version; a bigger jump is rejected as VersionJump. */
  readonly statusVersionMaxStep: number;
  readonly parking: {
    /** How long an early arrival waits for its order before it is rejected as OrderNeverArrived. */
    readonly horizonSeconds: number;
    /** The sweeper leaves younger items alone: their order's batch is the one to apply them. */
    readonly sweepMinAgeSeconds: number;
    /** One page per sweep run: what a run reads, holds and costs, however many items are parked. */
    readonly sweepMaxItemsPerRun: number;
  };
  readonly retry: RetryPolicy & {
    readonly delayedRetryEnabled: boolean;
    /** Signs the retry state a delayed-retry copy carries and keys its MessageId: senders can forge neither. */
    readonly stateSigningKey?: string;
    /** The key before the last rotation: verification accepts it too, so copies in flight keep their budget. */
    readonly previousStateSigningKey?: string;
  };
  readonly outbox: {
    /** The topic OrderAccepted events go to. */
    readonly orderEventsTopicName: string;
    readonly publishedTtlSeconds: number;
    /** The sweeper republishes entries pending longer than this: the change feed had its chance. */
    readonly sweepMinAgeSeconds: number;
    /** Above this age of the oldest pending entry, each sweep logs an error line. */
    readonly lagAlertSeconds: number;
    /** One page per sweep run, oldest first. */
    readonly sweepMaxItemsPerRun: number;
    /** Marks (one replace each, in its entry's partition) a publisher has in flight at once. */
    readonly markConcurrency: number;
  };
  readonly shipments: {
    readonly fulfilmentSubscriptionName: string;
    /** Unset: the requestShipment and reconcileShipments functions refuse to start (they name it). */
    readonly carrierApiUrl?: string;
    readonly carrierApiKey?: string;
    readonly carrierTimeoutMs: number;
    readonly leaseSeconds: number;
    readonly reconcileMaxAttempts: number;
    readonly reconcileBatchSize: number;
  };
  /** The HTTP intake, POST /api/orders. */
  readonly intake: {
    readonly maxBodyBytes: number;
    readonly leaseSeconds: number;
    readonly keyRetentionSeconds: number;
    /** Whom keys and orders belong to: one shared scope, or the Entra ID principal Easy Auth names. */
    readonly callerIdentity: CallerIdentityMode;
  };
  /** The trigger's own connection, for sending delayed retries: a connection string, or a namespace with identity. */
  readonly serviceBus: { readonly connectionString?: string; readonly fullyQualifiedNamespace?: string; readonly clientId?: string };
  readonly queue: {
    readonly maxDeliveryCount: number;
    readonly lockDurationSeconds: number;
    readonly lockRenewalMaxSeconds: number;
    readonly messageTimeToLiveSeconds: number;
    readonly resubmitHorizonSeconds: number;
  };
}

/** From the settings' names to the shape the app's parts take. */
export function toSettings(s: ParsedSettings): Settings {
  return {
    ordersQueueName: s.ORDERS_QUEUE_NAME,
    cosmos: {
      endpoint: s.COSMOS_ENDPOINT,
      key: s.COSMOS_KEY,
      caCertificatePath: s.COSMOS_CA_CERT_PATH,
      databaseName: s.COSMOS_DATABASE,
      ordersContainerName: s.COSMOS_ORDERS_CONTAINER,
    },
    consumerName: s.CONSUMER_NAME,
    markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    maxMessageBytes: s.MAX_MESSAGE_BYTES,
    maxConcurrencyAttempts: s.MAX_CONCURRENCY_ATTEMPTS,
    statusVersionMaxStep: s.STATUS_VERSION_MAX_STEP,
    parking: {
      horizonSeconds: parkingHorizonSecondsOf(s),
      sweepMinAgeSeconds: s.PARKED_SWEEP_MIN_AGE_SECONDS,
      sweepMaxItemsPerRun: s.SWEEP_MAX_ITEMS_PER_RUN,
    },
    retry: {
      inInvocationMs: s.TRANSIENT_RETRY_IN_INVOCATION_MS,
      firstDelayMs: s.DELAYED_RETRY_FIRST_DELAY_SECONDS * 1000,
      maxDelayMs: s.DELAYED_RETRY_MAX_DELAY_SECONDS * 1000,
      budgetMs: s.TRANSIENT_RETRY_BUDGET_SECONDS * 1000,
      delayedRetryEnabled: s.DELAYED_RETRY_ENABLED === 'true',
      stateSigningKey: s.RETRY_STATE_SIGNING_KEY,
      previousStateSigningKey: s.RETRY_STATE_SIGNING_KEY_PREVIOUS,
    },
    outbox: {
      orderEventsTopicName: s.ORDER_EVENTS_TOPIC_NAME,
      publishedTtlSeconds: s.OUTBOX_PUBLISHED_TTL_SECONDS,
      sweepMinAgeSeconds: s.OUTBOX_SWEEP_MIN_AGE_SECONDS,
      lagAlertSeconds: s.OUTBOX_LAG_ALERT_SECONDS,
      sweepMaxItemsPerRun: s.SWEEP_MAX_ITEMS_PER_RUN,
      markConcurrency: s.OUTBOX_MARK_CONCURRENCY,
    },
    shipments: {
      fulfilmentSubscriptionName: s.FULFILMENT_SUBSCRIPTION_NAME,
      carrierApiUrl: s.CARRIER_API_URL,
      carrierApiKey: s.CARRIER_API_KEY,
      carrierTimeoutMs: s.CARRIER_TIMEOUT_MS,
      leaseSeconds: s.SHIPMENT_LEASE_SECONDS,
      reconcileMaxAttempts: s.SHIPMENT_RECONCILE_MAX_ATTEMPTS,
      reconcileBatchSize: s.SHIPMENT_RECONCILE_BATCH_SIZE,
    },
    intake: {
      maxBodyBytes: s.INTAKE_MAX_BODY_BYTES,
      leaseSeconds: s.INTAKE_LEASE_SECONDS,
      keyRetentionSeconds: s.INTAKE_KEY_RETENTION_SECONDS,
      callerIdentity: s.INTAKE_CALLER_IDENTITY,
    },
    serviceBus: {
      connectionString: s.ServiceBusConnection,
      fullyQualifiedNamespace: s.ServiceBusConnection__fullyQualifiedNamespace,
      clientId: s.ServiceBusConnection__clientId,
    },
    queue: queueSettingsOf(s),
  };
}

/** The queue's properties the retention rule is checked against: the app reads them, and the doctor compares them with the queue. */
export function queueSettingsOf(
  s: Pick<
    ParsedSettings,
    'QUEUE_MAX_DELIVERY_COUNT' | 'QUEUE_LOCK_DURATION_SECONDS' | 'LOCK_RENEWAL_MAX_SECONDS' | 'QUEUE_MESSAGE_TTL_SECONDS' | 'DLQ_RESUBMIT_HORIZON_SECONDS'
  >,
): Settings['queue'] {
  return {
    maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
    lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
    lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
    messageTimeToLiveSeconds: s.QUEUE_MESSAGE_TTL_SECONDS,
    resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
  };
}

/** How long an early arrival waits for its order: unset, as long as its dead-lettered message could still be resubmitted. */
export function parkingHorizonSecondsOf(s: Pick<ParsedSettings, 'PARKED_ITEM_HORIZON_SECONDS' | 'DLQ_RESUBMIT_HORIZON_SECONDS'>): number {
  return s.PARKED_ITEM_HORIZON_SECONDS ?? s.DLQ_RESUBMIT_HORIZON_SECONDS;
}
