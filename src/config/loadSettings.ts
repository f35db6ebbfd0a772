import { isSecureOrLoopback, secureOrLoopbackRule } from '../http/index.js';
import { ConfigurationError } from '../configurationError.js';
import type { SettingProblem } from '../configurationError.js';
import { checkMarkerRetention, checkParkedItemRetention, checkRequestKeyRetention } from '../idempotency/index.js';
import { deepFreeze, parseOrThrow } from './environment.js';
import type { Environment } from './environment.js';
import { parkingHorizonSecondsOf, toSettings } from './settings.js';
import type { Settings } from './settings.js';
import { settingsSchema } from './settingsSchema.js';

/**
 * Reads and checks every setting once. Throws a `ConfigurationError` naming each bad setting, so
 * the worker fails to start with the reason instead of failing on the first message.
 */
export function loadSettings(env: Environment = process.env): Readonly<Settings> {
  const s = parseOrThrow(settingsSchema(), env);
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
    problems.push({
      setting: 'DELAYED_RETRY_MAX_DELAY_SECONDS',
      problem: `must be at least DELAYED_RETRY_FIRST_DELAY_SECONDS (${s.DELAYED_RETRY_FIRST_DELAY_SECONDS})`,
    });
  }
  // A look-up and a booking call, each up to the timeout, must both fit in one lease, with room to record the answer.
  if (s.SHIPMENT_LEASE_SECONDS * 1000 < 3 * s.CARRIER_TIMEOUT_MS) {
    problems.push({
      setting: 'SHIPMENT_LEASE_SECONDS',
      problem: `must be at least 3 x CARRIER_TIMEOUT_MS (${(3 * s.CARRIER_TIMEOUT_MS) / 1000} s), so an owner's calls end inside its lease`,
    });
  }
  problems.push(...carrierUrlProblems(s.CARRIER_API_URL, s.CARRIER_API_KEY));
  if (s.DELAYED_RETRY_ENABLED === 'true' && s.RETRY_STATE_SIGNING_KEY === undefined) {
    problems.push({
      setting: 'RETRY_STATE_SIGNING_KEY',
      problem:
        'is required while DELAYED_RETRY_ENABLED is true: without it, anyone who can send could forge a retry state (a budget that never ends) or take a copy MessageId first',
    });
  }
  if (!retention.ok) problems.push({ setting: 'INBOX_MARKER_TTL_SECONDS', problem: retention.explanation });
  // Conflict and rejection records and rejected parked items are kept as long as markers: the rule above covers the resubmit horizon.
  const parkedRetention = checkParkedItemRetention({
    itemTtlSeconds: s.INBOX_MARKER_TTL_SECONDS,
    parkingHorizonSeconds: parkingHorizonSecondsOf(s),
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
    problems.push({
      setting: 'INTAKE_MAX_BODY_BYTES',
      problem: `must be at most MAX_MESSAGE_BYTES (${s.MAX_MESSAGE_BYTES}), or an accepted order could not be delivered`,
    });
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return deepFreeze(toSettings(s));
}

/** The carrier client refuses plain http off this machine; start-up says so first, and keeps the key off such a URL. */
function carrierUrlProblems(url: string | undefined, key: string | undefined): SettingProblem[] {
  if (url === undefined || isSecureOrLoopback(new URL(url))) return [];
  const problems: SettingProblem[] = [{ setting: 'CARRIER_API_URL', problem: secureOrLoopbackRule }];
  if (key !== undefined)
    problems.push({ setting: 'CARRIER_API_KEY', problem: 'is refused: CARRIER_API_URL is not https://, so the key would cross the network in clear text' });
  return problems;
}
