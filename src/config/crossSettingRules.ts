import type { SettingProblem } from '../configurationError.js';
import { isSecureOrLoopback, secureOrLoopbackRule } from '../http/index.js';
import { checkMarkerRetention, checkParkedItemRetention, checkRequestKeyRetention } from '../idempotency/index.js';
import { parkingHorizonSecondsOf } from './settings.js';
import type { ParsedSettings } from './settingsSchema.js';

/** A rule between settings, which no one setting's schema can check: its problems, none when it holds. */
type CrossSettingRule = (s: ParsedSettings) => SettingProblem[];

const serviceBusConnectionGiven: CrossSettingRule = (s) =>
  s.ServiceBusConnection || s.ServiceBusConnection__fullyQualifiedNamespace
    ? []
    : [
        {
          setting: 'ServiceBusConnection',
          problem: 'set ServiceBusConnection (a connection string) or ServiceBusConnection__fullyQualifiedNamespace (managed identity)',
        },
      ];

const delayedRetryDelaysInOrder: CrossSettingRule = (s) =>
  s.DELAYED_RETRY_MAX_DELAY_SECONDS < s.DELAYED_RETRY_FIRST_DELAY_SECONDS
    ? [{ setting: 'DELAYED_RETRY_MAX_DELAY_SECONDS', problem: `must be at least DELAYED_RETRY_FIRST_DELAY_SECONDS (${s.DELAYED_RETRY_FIRST_DELAY_SECONDS})` }]
    : [];

/** A look-up and a booking call, each up to the timeout, must both fit in one lease, with room to record the answer. */
const carrierCallsFitTheLease: CrossSettingRule = (s) =>
  s.SHIPMENT_LEASE_SECONDS * 1000 < 3 * s.CARRIER_TIMEOUT_MS
    ? [
        {
          setting: 'SHIPMENT_LEASE_SECONDS',
          problem: `must be at least 3 x CARRIER_TIMEOUT_MS (${(3 * s.CARRIER_TIMEOUT_MS) / 1000} s), so an owner's calls end inside its lease`,
        },
      ]
    : [];

/** The carrier client refuses plain http off this machine; start-up says so first, and keeps the key off such a URL. */
const carrierUrlSecure: CrossSettingRule = (s) => {
  if (s.CARRIER_API_URL === undefined || isSecureOrLoopback(new URL(s.CARRIER_API_URL))) return [];
  const problems: SettingProblem[] = [{ setting: 'CARRIER_API_URL', problem: secureOrLoopbackRule }];
  if (s.CARRIER_API_KEY !== undefined)
    problems.push({ setting: 'CARRIER_API_KEY', problem: 'is refused: CARRIER_API_URL is not https://, so the key would cross the network in clear text' });
  return problems;
};

const signingKeyForDelayedRetry: CrossSettingRule = (s) =>
  s.DELAYED_RETRY_ENABLED === 'true' && s.RETRY_STATE_SIGNING_KEY === undefined
    ? [
        {
          setting: 'RETRY_STATE_SIGNING_KEY',
          problem:
            'is required while DELAYED_RETRY_ENABLED is true: without it, anyone who can send could forge a retry state (a budget that never ends) or take a copy MessageId first',
        },
      ]
    : [];

const markersOutliveRedelivery: CrossSettingRule = (s) => {
  const retention = checkMarkerRetention({
    markerTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    maxDeliveryCount: s.QUEUE_MAX_DELIVERY_COUNT,
    lockDurationSeconds: s.QUEUE_LOCK_DURATION_SECONDS,
    lockRenewalMaxSeconds: s.LOCK_RENEWAL_MAX_SECONDS,
    messageTimeToLiveSeconds: s.QUEUE_MESSAGE_TTL_SECONDS,
    retryBudgetSeconds: s.TRANSIENT_RETRY_BUDGET_SECONDS,
    resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
  });
  return retention.ok ? [] : [{ setting: 'INBOX_MARKER_TTL_SECONDS', problem: retention.explanation }];
};

/** Conflict and rejection records and rejected parked items are kept as long as markers: the marker rule covers the resubmit horizon. */
const parkedItemsOutliveTheirHorizon: CrossSettingRule = (s) => {
  const retention = checkParkedItemRetention({
    itemTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    parkingHorizonSeconds: parkingHorizonSecondsOf(s),
    resubmitHorizonSeconds: s.DLQ_RESUBMIT_HORIZON_SECONDS,
  });
  return retention.ok ? [] : [{ setting: 'INBOX_MARKER_TTL_SECONDS', problem: retention.explanation }];
};

const requestKeysOutliveClientRetries: CrossSettingRule = (s) => {
  const retention = checkRequestKeyRetention({
    keyTtlSeconds: s.INTAKE_KEY_RETENTION_SECONDS,
    clientRetryHorizonSeconds: s.INTAKE_CLIENT_RETRY_HORIZON_SECONDS,
    leaseSeconds: s.INTAKE_LEASE_SECONDS,
  });
  return retention.ok ? [] : [{ setting: 'INTAKE_KEY_RETENTION_SECONDS', problem: retention.explanation }];
};

/** The intake publishes the order it accepted as one message: it must fit what the consumer accepts. */
const acceptedOrderFitsAMessage: CrossSettingRule = (s) =>
  s.INTAKE_MAX_BODY_BYTES > s.MAX_MESSAGE_BYTES
    ? [
        {
          setting: 'INTAKE_MAX_BODY_BYTES',
          problem: `must be at most MAX_MESSAGE_BYTES (${s.MAX_MESSAGE_BYTES}), or an accepted order could not be delivered`,
        },
      ]
    : [];

/**
 * What the rules between settings find wrong, each problem naming its setting, in the order start-up
 * reports them. The list is built per call, not at load, so that mutation testing (which skips what
 * runs at import) checks it too.
 */
export function crossSettingProblems(s: ParsedSettings): SettingProblem[] {
  const rules: readonly CrossSettingRule[] = [
    serviceBusConnectionGiven,
    delayedRetryDelaysInOrder,
    carrierCallsFitTheLease,
    carrierUrlSecure,
    signingKeyForDelayedRetry,
    markersOutliveRedelivery,
    parkedItemsOutliveTheirHorizon,
    requestKeysOutliveClientRetries,
    acceptedOrderFitsAMessage,
  ];
  return rules.flatMap((rule) => rule(s));
}
