import { existsSync } from 'node:fs';
import { z } from 'zod';
import { isSecureOrLoopback, secureOrLoopbackRule } from './http/loopbackAddress.js';
import { ConfigurationError } from './configurationError.js';
import type { SettingProblem } from './configurationError.js';
import { checkMarkerRetention, checkParkedItemRetention, checkRequestKeyRetention, resubmitMarginSeconds } from './idempotency/index.js';
import type { RetryPolicy } from './idempotency/index.js';
import { callerIdentityModes } from './intake/intakeCaller.js';
import type { CallerIdentityMode } from './intake/intakeCaller.js';

const days = (n: number) => n * 24 * 60 * 60;

/** Defaults, named so the settings tables (docs/settings.md) and the tests can quote them. */
export const settingDefaults = {
  COSMOS_DATABASE: 'orders',
  COSMOS_ORDERS_CONTAINER: 'orders',
  INBOX_MARKER_TTL_SECONDS: days(30),
  QUEUE_MAX_DELIVERY_COUNT: 10,
  QUEUE_LOCK_DURATION_SECONDS: 60,
  LOCK_RENEWAL_MAX_SECONDS: 300,
  QUEUE_MESSAGE_TTL_SECONDS: days(14),
  DLQ_RESUBMIT_HORIZON_SECONDS: days(14),
  MAX_MESSAGE_BYTES: 256 * 1024,
  MAX_CONCURRENCY_ATTEMPTS: 10,
  STATUS_VERSION_MAX_STEP: 1000,
  TRANSIENT_RETRY_IN_INVOCATION_MS: 10_000,
  DELAYED_RETRY_FIRST_DELAY_SECONDS: 30,
  DELAYED_RETRY_MAX_DELAY_SECONDS: 900,
  TRANSIENT_RETRY_BUDGET_SECONDS: days(1),
  DELAYED_RETRY_ENABLED: 'true',
  /** Empty means "the resubmit horizon" (DLQ_RESUBMIT_HORIZON_SECONDS). */
  PARKED_ITEM_HORIZON_SECONDS: undefined,
  PARKED_SWEEP_SCHEDULE: '0 */5 * * * *',
  PARKED_SWEEP_MIN_AGE_SECONDS: 60,
  SWEEP_MAX_ITEMS_PER_RUN: 500,
  ORDER_EVENTS_TOPIC_NAME: 'order-events',
  COSMOS_LEASES_CONTAINER: 'leases',
  OUTBOX_PUBLISHED_TTL_SECONDS: days(7),
  OUTBOX_SWEEP_SCHEDULE: '30 */1 * * * *',
  OUTBOX_SWEEP_MIN_AGE_SECONDS: 60,
  OUTBOX_LAG_ALERT_SECONDS: 300,
  OUTBOX_MARK_CONCURRENCY: 16,
  FULFILMENT_SUBSCRIPTION_NAME: 'fulfilment',
  CARRIER_TIMEOUT_MS: 10_000,
  SHIPMENT_LEASE_SECONDS: 60,
  SHIPMENT_RECONCILE_SCHEDULE: '45 */2 * * * *',
  SHIPMENT_RECONCILE_MAX_ATTEMPTS: 5,
  SHIPMENT_RECONCILE_BATCH_SIZE: 50,
  INTAKE_MAX_BODY_BYTES: 64 * 1024,
  INTAKE_LEASE_SECONDS: 10,
  INTAKE_CLIENT_RETRY_HORIZON_SECONDS: days(1),
  INTAKE_KEY_RETENTION_SECONDS: days(2),
  INTAKE_CALLER_IDENTITY: 'shared',
} as const;

const wholeNumber = (min: number, fallback: number) => z.coerce.number().int().min(min).default(fallback);

/** A secret that signs retry state: resolved (not a Key Vault reference still) and long enough to be one. */
const signingKey = (text: z.ZodOptional<z.ZodString>) =>
  text
    .refine((key) => key === undefined || !key.startsWith('@Microsoft.KeyVault('), 'is still a Key Vault reference: the platform could not resolve it (check the app identity has Key Vault Secrets User on the vault, and keyVaultReferenceIdentity)')
    .refine((key) => key === undefined || key.length >= 32, 'must be at least 32 characters (a random secret: `openssl rand -base64 32`)');

/**
 * Built when the settings are read (once, at start-up), not when the module loads: so each rule is
 * checked by the tests that read settings, mutation testing included (it cannot tell which test
 * depends on code that ran at import).
 */
function settingsSchema() {
  const optionalText = z.string().trim().min(1).optional();
  return z.object({
    ServiceBusConnection: optionalText,
    ServiceBusConnection__fullyQualifiedNamespace: optionalText,
    ServiceBusConnection__clientId: optionalText,
    ORDERS_QUEUE_NAME: z.string().trim().min(1, 'is required (the queue the trigger listens to)'),
    COSMOS_ENDPOINT: z.url({ protocol: /^https$/, error: 'must be an https:// URL such as https://myaccount.documents.azure.com:443/' }),
    COSMOS_KEY: optionalText,
    COSMOS_CA_CERT_PATH: optionalText.refine((path) => path === undefined || existsSync(path), 'names a file that does not exist'),
    COSMOS_DATABASE: z.string().trim().min(1).default(settingDefaults.COSMOS_DATABASE),
    COSMOS_ORDERS_CONTAINER: z.string().trim().min(1).default(settingDefaults.COSMOS_ORDERS_CONTAINER),
    CONSUMER_NAME: optionalText,
    INBOX_MARKER_TTL_SECONDS: wholeNumber(1, settingDefaults.INBOX_MARKER_TTL_SECONDS),
    QUEUE_MAX_DELIVERY_COUNT: wholeNumber(1, settingDefaults.QUEUE_MAX_DELIVERY_COUNT),
    QUEUE_LOCK_DURATION_SECONDS: wholeNumber(5, settingDefaults.QUEUE_LOCK_DURATION_SECONDS),
    LOCK_RENEWAL_MAX_SECONDS: wholeNumber(0, settingDefaults.LOCK_RENEWAL_MAX_SECONDS),
    QUEUE_MESSAGE_TTL_SECONDS: wholeNumber(1, settingDefaults.QUEUE_MESSAGE_TTL_SECONDS),
    DLQ_RESUBMIT_HORIZON_SECONDS: wholeNumber(0, settingDefaults.DLQ_RESUBMIT_HORIZON_SECONDS),
    MAX_MESSAGE_BYTES: wholeNumber(1024, settingDefaults.MAX_MESSAGE_BYTES),
    MAX_CONCURRENCY_ATTEMPTS: wholeNumber(1, settingDefaults.MAX_CONCURRENCY_ATTEMPTS),
    STATUS_VERSION_MAX_STEP: wholeNumber(1, settingDefaults.STATUS_VERSION_MAX_STEP),
    TRANSIENT_RETRY_IN_INVOCATION_MS: wholeNumber(0, settingDefaults.TRANSIENT_RETRY_IN_INVOCATION_MS).refine((ms) => ms <= 60_000, 'must be at most 60000 (well inside the lock)'),
    DELAYED_RETRY_FIRST_DELAY_SECONDS: wholeNumber(1, settingDefaults.DELAYED_RETRY_FIRST_DELAY_SECONDS),
    DELAYED_RETRY_MAX_DELAY_SECONDS: wholeNumber(1, settingDefaults.DELAYED_RETRY_MAX_DELAY_SECONDS),
    TRANSIENT_RETRY_BUDGET_SECONDS: wholeNumber(0, settingDefaults.TRANSIENT_RETRY_BUDGET_SECONDS),
    RETRY_STATE_SIGNING_KEY: signingKey(optionalText),
    RETRY_STATE_SIGNING_KEY_PREVIOUS: signingKey(optionalText),
    DELAYED_RETRY_ENABLED: z.enum(['true', 'false'], { error: 'must be true or false' }).default(settingDefaults.DELAYED_RETRY_ENABLED),
    PARKED_ITEM_HORIZON_SECONDS: z.coerce.number().int().min(1).optional(),
    PARKED_SWEEP_SCHEDULE: z.string().trim().min(1).default(settingDefaults.PARKED_SWEEP_SCHEDULE),
    PARKED_SWEEP_MIN_AGE_SECONDS: wholeNumber(0, settingDefaults.PARKED_SWEEP_MIN_AGE_SECONDS),
    SWEEP_MAX_ITEMS_PER_RUN: wholeNumber(1, settingDefaults.SWEEP_MAX_ITEMS_PER_RUN).refine((n) => n <= 5000, 'must be at most 5000 (one run holds a page in memory)'),
    ORDER_EVENTS_TOPIC_NAME: z.string().trim().min(1).default(settingDefaults.ORDER_EVENTS_TOPIC_NAME),
    COSMOS_LEASES_CONTAINER: z.string().trim().min(1).default(settingDefaults.COSMOS_LEASES_CONTAINER),
    OUTBOX_PUBLISHED_TTL_SECONDS: wholeNumber(1, settingDefaults.OUTBOX_PUBLISHED_TTL_SECONDS),
    OUTBOX_SWEEP_SCHEDULE: z.string().trim().min(1).default(settingDefaults.OUTBOX_SWEEP_SCHEDULE),
    OUTBOX_SWEEP_MIN_AGE_SECONDS: wholeNumber(1, settingDefaults.OUTBOX_SWEEP_MIN_AGE_SECONDS),
    OUTBOX_LAG_ALERT_SECONDS: wholeNumber(1, settingDefaults.OUTBOX_LAG_ALERT_SECONDS),
    OUTBOX_MARK_CONCURRENCY: wholeNumber(1, settingDefaults.OUTBOX_MARK_CONCURRENCY).refine(
      (n) => n <= 100,
      'must be at most 100 (a change-feed page holds at most 100 documents; more marks in flight only make a bigger burst of request units)',
    ),
    FULFILMENT_SUBSCRIPTION_NAME: z.string().trim().min(1).default(settingDefaults.FULFILMENT_SUBSCRIPTION_NAME),
    CARRIER_API_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s):// URL, the base of the carrier API (https://api.carrier.example/v1/)' }).optional(),
    CARRIER_API_KEY: optionalText.refine(
      (key) => key === undefined || !key.startsWith('@Microsoft.KeyVault('),
      'is still a Key Vault reference: the platform could not resolve it (check the app identity has Key Vault Secrets User on the vault, and keyVaultReferenceIdentity)',
    ),
    CARRIER_TIMEOUT_MS: wholeNumber(100, settingDefaults.CARRIER_TIMEOUT_MS).refine((ms) => ms <= 120_000, 'must be at most 120000'),
    SHIPMENT_LEASE_SECONDS: wholeNumber(1, settingDefaults.SHIPMENT_LEASE_SECONDS),
    SHIPMENT_RECONCILE_SCHEDULE: z.string().trim().min(1).default(settingDefaults.SHIPMENT_RECONCILE_SCHEDULE),
    SHIPMENT_RECONCILE_MAX_ATTEMPTS: wholeNumber(1, settingDefaults.SHIPMENT_RECONCILE_MAX_ATTEMPTS),
    SHIPMENT_RECONCILE_BATCH_SIZE: wholeNumber(1, settingDefaults.SHIPMENT_RECONCILE_BATCH_SIZE).refine((n) => n <= 1000, 'must be at most 1000'),
    INTAKE_MAX_BODY_BYTES: wholeNumber(256, settingDefaults.INTAKE_MAX_BODY_BYTES),
    INTAKE_LEASE_SECONDS: wholeNumber(1, settingDefaults.INTAKE_LEASE_SECONDS),
    INTAKE_CLIENT_RETRY_HORIZON_SECONDS: wholeNumber(0, settingDefaults.INTAKE_CLIENT_RETRY_HORIZON_SECONDS),
    INTAKE_KEY_RETENTION_SECONDS: wholeNumber(1, settingDefaults.INTAKE_KEY_RETENTION_SECONDS),
    // entra only behind App Service authentication: without it, x-ms-client-principal is whatever the client sent.
    INTAKE_CALLER_IDENTITY: z
      .enum(callerIdentityModes as [CallerIdentityMode, ...CallerIdentityMode[]], { error: 'must be shared or entra (entra only with App Service authentication on: intakeAuthEnabled)' })
      .default(settingDefaults.INTAKE_CALLER_IDENTITY),
  });
}

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

/**
 * Reads and checks every setting once. Throws a `ConfigurationError` naming each bad setting, so
 * the worker fails to start with the reason instead of failing on the first message.
 */
export function loadSettings(env: Readonly<Record<string, string | undefined>> = process.env): Readonly<Settings> {
  const parsed = settingsSchema().safeParse(withoutBlanks(env));
  if (!parsed.success) {
    // Stryker disable next-line StringLiteral: every issue of an object schema has a path; the fallback is for a zod change, not reachable from an env object
    throw new ConfigurationError(parsed.error.issues.map((i) => ({ setting: String(i.path[0] ?? '(settings)'), problem: i.message })));
  }
  const s = parsed.data;
  const problems: SettingProblem[] = [];
  if (!s.ServiceBusConnection && !s.ServiceBusConnection__fullyQualifiedNamespace) {
    problems.push({
      setting: 'ServiceBusConnection',
      problem: 'set ServiceBusConnection (a connection string) or ServiceBusConnection__fullyQualifiedNamespace (managed identity)',
    });
  }
  const retention = checkMarkerRetention({
    markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
    lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
    lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
    messageTimeToLiveSeconds: s.QUEUE_MESSAGE_TTL_SECONDS,
    retryBudgetSeconds: s.TRANSIENT_RETRY_BUDGET_SECONDS,
    resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
  });
  if (s.DELAYED_RETRY_MAX_DELAY_SECONDS < s.DELAYED_RETRY_FIRST_DELAY_SECONDS) {
    problems.push({ setting: 'DELAYED_RETRY_MAX_DELAY_SECONDS', problem: `must be at least DELAYED_RETRY_FIRST_DELAY_SECONDS (${s.DELAYED_RETRY_FIRST_DELAY_SECONDS})` });
  }
  // A look-up and a booking call, each up to the timeout, must both fit in one lease, with room to record the answer.
  if (s.SHIPMENT_LEASE_SECONDS * 1000 < 3 * s.CARRIER_TIMEOUT_MS) {
    problems.push({ setting: 'SHIPMENT_LEASE_SECONDS', problem: `must be at least 3 x CARRIER_TIMEOUT_MS (${(3 * s.CARRIER_TIMEOUT_MS) / 1000} s), so an owner's calls end inside its lease` });
  }
  problems.push(...carrierUrlProblems(s.CARRIER_API_URL, s.CARRIER_API_KEY));
  if (s.DELAYED_RETRY_ENABLED === 'true' && s.RETRY_STATE_SIGNING_KEY === undefined) {
    problems.push({ setting: 'RETRY_STATE_SIGNING_KEY', problem: 'is required while DELAYED_RETRY_ENABLED is true: without it, anyone who can send could forge a retry state (a budget that never ends) or take a copy MessageId first' });
  }
  if (!retention.ok) problems.push({ setting: 'INBOX_MARKER_TTL_SECONDS', problem: retention.explanation });
  // Conflict and rejection records and rejected parked items are kept as long as markers: the rule above covers the resubmit horizon.
  const parkedRetention = checkParkedItemRetention({
    itemTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    parkingHorizonSeconds: s.PARKED_ITEM_HORIZON_SECONDS ?? s.DLQ_RESUBMIT_HORIZON_SECONDS,
    resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
  });
  if (!parkedRetention.ok) problems.push({ setting: 'INBOX_MARKER_TTL_SECONDS', problem: parkedRetention.explanation });
  const keyRetention = checkRequestKeyRetention({
    keyTtlSeconds: s.INTAKE_KEY_RETENTION_SECONDS,
    clientRetryHorizonSeconds: s.INTAKE_CLIENT_RETRY_HORIZON_SECONDS,
    leaseSeconds: s.INTAKE_LEASE_SECONDS,
  });
  if (!keyRetention.ok) problems.push({ setting: 'INTAKE_KEY_RETENTION_SECONDS', problem: keyRetention.explanation });
  // The intake publishes the order it accepted as one message: it must fit what the consumer accepts.
  if (s.INTAKE_MAX_BODY_BYTES > s.MAX_MESSAGE_BYTES) {
    problems.push({ setting: 'INTAKE_MAX_BODY_BYTES', problem: `must be at most MAX_MESSAGE_BYTES (${s.MAX_MESSAGE_BYTES}), or an accepted order could not be delivered` });
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return deepFreeze(toSettings(s));
}

/** The carrier client refuses plain http off this machine; start-up says so first, and keeps the key off such a URL. */
function carrierUrlProblems(url: string | undefined, key: string | undefined): SettingProblem[] {
  if (url === undefined || isSecureOrLoopback(new URL(url))) return [];
  const problems: SettingProblem[] = [{ setting: 'CARRIER_API_URL', problem: secureOrLoopbackRule }];
  if (key !== undefined) problems.push({ setting: 'CARRIER_API_KEY', problem: 'is refused: CARRIER_API_URL is not https://, so the key would cross the network in clear text' });
  return problems;
}

function toSettings(s: z.infer<ReturnType<typeof settingsSchema>>): Settings {
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
      horizonSeconds: s.PARKED_ITEM_HORIZON_SECONDS ?? s.DLQ_RESUBMIT_HORIZON_SECONDS,
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
    queue: {
      maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
      lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
      lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
      messageTimeToLiveSeconds: s.QUEUE_MESSAGE_TTL_SECONDS,
      resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
    },
  };
}

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

const setupSettingNames = {
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
export function loadSetupSettings(env: Readonly<Record<string, string | undefined>>): Readonly<SetupSettings> {
  const parsed = settingsSchema().pick(setupSettingNames).safeParse(withoutBlanks(env));
  if (!parsed.success) {
    throw new ConfigurationError(parsed.error.issues.map((i) => ({ setting: String(i.path[0] ?? '(settings)'), problem: i.message })));
  }
  const s = parsed.data;
  return deepFreeze({
    ordersQueueName: s.ORDERS_QUEUE_NAME,
    orderEventsTopicName: s.ORDER_EVENTS_TOPIC_NAME,
    fulfilmentSubscriptionName: s.FULFILMENT_SUBSCRIPTION_NAME,
    cosmos: { databaseName: s.COSMOS_DATABASE, ordersContainerName: s.COSMOS_ORDERS_CONTAINER, leasesContainerName: s.COSMOS_LEASES_CONTAINER },
    markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    retryBudgetSeconds: s.TRANSIENT_RETRY_BUDGET_SECONDS,
    queue: {
      maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
      lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
      lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
      messageTimeToLiveSeconds: s.QUEUE_MESSAGE_TTL_SECONDS,
      resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
    },
  });
}

/** What the operator tool needs to decide whether a resubmit is still covered by the markers. */
export interface ResubmitRetentionSettings {
  readonly markerTtlSeconds: number;
  /** How long the markers must still live when a copy is sent (see `resubmitMarginSeconds`). */
  readonly marginSeconds: number;
  /** The settings the margin was computed from, for the tool's explanation. */
  readonly marginExplanation: string;
}

/**
 * How long an operator-action record is kept: as long as anything it acted on can still come back
 * (the resubmit horizon) or still has inbox markers to explain (the marker TTL), whichever is longer.
 */
export function loadOperatorActionRetentionSeconds(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const names = { INBOX_MARKER_TTL_SECONDS: true, DLQ_RESUBMIT_HORIZON_SECONDS: true } as const;
  const parsed = settingsSchema().pick(names).safeParse(withoutBlanks(env));
  if (!parsed.success) throw new ConfigurationError(parsed.error.issues.map((i) => ({ setting: String(i.path[0]), problem: i.message })));
  return Math.max(parsed.data.INBOX_MARKER_TTL_SECONDS, parsed.data.DLQ_RESUBMIT_HORIZON_SECONDS);
}

/**
 * The retention settings alone, read with the app's rules (and defaults), for the operator tool: it
 * must use the same values as the app, or its check would prove nothing.
 */
export function loadResubmitRetention(env: Readonly<Record<string, string | undefined>> = process.env): Readonly<ResubmitRetentionSettings> {
  const names = { INBOX_MARKER_TTL_SECONDS: true, QUEUE_MAX_DELIVERY_COUNT: true, QUEUE_LOCK_DURATION_SECONDS: true, LOCK_RENEWAL_MAX_SECONDS: true, TRANSIENT_RETRY_BUDGET_SECONDS: true } as const;
  const parsed = settingsSchema().pick(names).safeParse(withoutBlanks(env));
  if (!parsed.success) throw new ConfigurationError(parsed.error.issues.map((i) => ({ setting: String(i.path[0]), problem: i.message })));
  const s = parsed.data;
  const marginSeconds = resubmitMarginSeconds({
    maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
    lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
    lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
    retryBudgetSeconds: s.TRANSIENT_RETRY_BUDGET_SECONDS,
  });
  const marginExplanation =
    `QUEUE_MAX_DELIVERY_COUNT ${s.QUEUE_MAX_DELIVERY_COUNT} x (LOCK_RENEWAL_MAX_SECONDS ${s.LOCK_RENEWAL_MAX_SECONDS} s + QUEUE_LOCK_DURATION_SECONDS ${s.QUEUE_LOCK_DURATION_SECONDS} s)` +
    ` + TRANSIENT_RETRY_BUDGET_SECONDS ${s.TRANSIENT_RETRY_BUDGET_SECONDS} s = ${marginSeconds} s`;
  return Object.freeze({ markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS, marginSeconds, marginExplanation });
}

/**
 * `AzureWebJobs.<name>.Disabled` (or `AzureWebJobs__<name>__Disabled`) set to true or 1: the host
 * starts no listener for the function, so its composition root need not (and must not) demand the
 * function's own settings. The Bicep disables the shipment functions when no carrier is configured.
 */
export function isFunctionDisabled(name: string, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const value = env[`AzureWebJobs.${name}.Disabled`] ?? env[`AzureWebJobs__${name}__Disabled`];
  return value !== undefined && ['true', '1'].includes(value.trim().toLowerCase());
}

/** An empty app setting means "not set" (the portal and azd write empty strings). */
function withoutBlanks(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1].trim() !== ''));
}

function deepFreeze<T extends object>(value: T): T {
  // Stryker disable next-line ConditionalExpression: settings never hold null (an absent value is undefined), so the null guard cannot change the result
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) deepFreeze(child);
  return Object.freeze(value);
}
