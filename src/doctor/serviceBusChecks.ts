import type { SetupSettings } from '../config.js';
import { checkMarkerRetention } from '../idempotency/index.js';
import { compare, missing } from './checkResult.js';
import type { CheckResult } from './checkResult.js';
import { describeSeconds, secondsOfIsoDuration } from './isoDuration.js';
import type { ExpectedRule, ExpectedSubscription } from './serviceBusExpectations.js';

/** A queue as the administration API describes it (the fields of the SDK's QueueProperties the app depends on). */
export interface FoundQueue {
  readonly lockDuration: string;
  readonly maxDeliveryCount: number;
  readonly defaultMessageTimeToLive: string;
  readonly requiresDuplicateDetection: boolean;
  readonly duplicateDetectionHistoryTimeWindow: string;
  readonly deadLetteringOnMessageExpiration: boolean;
  readonly requiresSession: boolean;
}

export interface FoundTopic {
  readonly requiresDuplicateDetection: boolean;
  readonly duplicateDetectionHistoryTimeWindow: string;
}

export interface FoundSubscription {
  readonly deadLetteringOnMessageExpiration: boolean;
  readonly requiresSession: boolean;
}

/** A rule as the SDK lists it: a SQL filter (`sqlExpression`) or a correlation filter (its fields). */
export interface FoundRule {
  readonly name: string;
  readonly filter: object;
}

const recreate = 'it is fixed when the entity is created: create a new one and point the app at it';

/**
 * The orders queue against what the app needs: duplicate detection, no sessions, dead-lettering on
 * expiry, and the properties the settings mirror (the start-up retention check computes with the
 * settings, so a queue that differs makes that check say yes on the wrong numbers); then the
 * retention rule itself, on the queue's real properties.
 */
export function checkOrdersQueue(settings: SetupSettings, found: FoundQueue | undefined): CheckResult[] {
  const subject = `queue '${settings.ordersQueueName}'`;
  if (!found) return [missing(subject, 'a queue with duplicate detection on', `create it (see docs/bring-your-own.md), or set ORDERS_QUEUE_NAME to yours`)];
  const lockSeconds = secondsOfIsoDuration(found.lockDuration);
  const ttlSeconds = secondsOfIsoDuration(found.defaultMessageTimeToLive);
  const results = [
    duplicateDetection(subject, found),
    compare(subject, 'sessions', 'off', onOff(found.requiresSession), !found.requiresSession, `processOrder's trigger reads without sessions; ${recreate}`),
    compare(
      subject,
      'dead-lettering on expiration',
      'on',
      onOff(found.deadLetteringOnMessageExpiration),
      found.deadLetteringOnMessageExpiration,
      'a message that expires unread would be dropped without a trace: turn it on (it can be changed)',
    ),
    mirrored(subject, 'lock duration', 'QUEUE_LOCK_DURATION_SECONDS', settings.queue.lockDurationSeconds, lockSeconds, found.lockDuration),
    mirrored(
      subject,
      'max delivery count',
      'QUEUE_MAX_DELIVERY_COUNT',
      settings.queue.maxDeliveryCount,
      found.maxDeliveryCount,
      String(found.maxDeliveryCount),
    ),
    mirrored(subject, 'message time-to-live', 'QUEUE_MESSAGE_TTL_SECONDS', settings.queue.messageTimeToLiveSeconds, ttlSeconds, found.defaultMessageTimeToLive),
  ];
  return [...results, retention(subject, settings, found.maxDeliveryCount, lockSeconds, ttlSeconds)];
}

export function checkOrderEventsTopic(settings: SetupSettings, found: FoundTopic | undefined): CheckResult[] {
  const subject = `topic '${settings.orderEventsTopicName}'`;
  if (!found)
    return [
      missing(
        subject,
        'a topic with duplicate detection on',
        'the outbox publisher sends OrderAccepted there: create it, or set ORDER_EVENTS_TOPIC_NAME to yours',
      ),
    ];
  return [duplicateDetection(subject, found)];
}

export function checkSubscription(
  topic: string,
  expected: ExpectedSubscription,
  found: FoundSubscription | undefined,
  rules: readonly FoundRule[],
): CheckResult[] {
  const subject = `subscription '${topic}/${expected.name}'`;
  if (!found)
    return [
      missing(
        subject,
        `a subscription with the rules ${expected.rules.map((r) => `'${r.name}'`).join(', ')}`,
        'create it with its rules (see docs/bring-your-own.md)',
      ),
    ];
  return [
    compare(
      subject,
      'sessions',
      onOff(expected.requiresSession),
      onOff(found.requiresSession),
      found.requiresSession === expected.requiresSession,
      `${expected.sessionReason}; ${recreate}`,
    ),
    compare(
      subject,
      'dead-lettering on expiration',
      'on',
      onOff(found.deadLetteringOnMessageExpiration),
      found.deadLetteringOnMessageExpiration,
      'turn it on (it can be changed)',
    ),
    ...checkRules(subject, expected.rules, rules),
  ];
}

/**
 * Each expected rule by name, with its filter; any other rule is wrong, because the subscription
 * would also receive what it matches, except a `$Default` that matches nothing (what the Bicep
 * leaves: Azure gives every subscription one that matches everything).
 */
function checkRules(subject: string, expected: readonly ExpectedRule[], found: readonly FoundRule[]): CheckResult[] {
  const byName = new Map(found.map((r) => [r.name.toLowerCase(), r]));
  const results = expected.map((rule) => {
    const there = byName.get(rule.name.toLowerCase());
    const wanted = describeExpectedRule(rule);
    if (!there)
      return {
        status: 'MISSING' as const,
        subject,
        property: `rule '${rule.name}'`,
        expected: wanted,
        found: 'nothing',
        fix: 'add the rule (rules can be added and removed at any time)',
      };
    return compare(
      subject,
      `rule '${rule.name}'`,
      wanted,
      describeFilter(there.filter),
      sameFilter(rule, there.filter),
      'replace the rule with the expected filter',
    );
  });
  const expectedNames = new Set(expected.map((r) => r.name.toLowerCase()));
  const others = found.filter((r) => !expectedNames.has(r.name.toLowerCase()) && !matchesNothing(r));
  return [
    ...results,
    ...others.map((r) => ({
      status: 'WRONG' as const,
      subject,
      property: `rule '${r.name}'`,
      expected: 'no such rule',
      found: describeFilter(r.filter),
      fix:
        r.name === '$Default'
          ? "Azure's $Default rule matches every message: delete it, or give it the filter 1=0"
          : 'the subscription also receives what it matches: delete it',
    })),
  ];
}

function duplicateDetection(subject: string, found: FoundQueue | FoundTopic): CheckResult {
  const window = secondsOfIsoDuration(found.duplicateDetectionHistoryTimeWindow);
  const shown = found.requiresDuplicateDetection
    ? `on (window ${window === undefined ? found.duplicateDetectionHistoryTimeWindow : describeSeconds(window)})`
    : 'off';
  return compare(
    subject,
    'duplicate detection',
    'on',
    shown,
    found.requiresDuplicateDetection,
    `duplicate detection can only be enabled when the entity is created (Standard or Premium): create a new one with it`,
  );
}

function mirrored(subject: string, property: string, setting: string, expected: number, found: number | undefined, raw: string): CheckResult {
  const unit = setting === 'QUEUE_MAX_DELIVERY_COUNT' ? (n: number) => String(n) : describeSeconds;
  const shown = found === undefined ? raw : unit(found);
  return compare(
    subject,
    property,
    `${unit(expected)} (${setting})`,
    shown,
    found === expected,
    `set ${setting}=${found ?? raw} in the app's settings, or change the queue: the retention rule is computed from the setting`,
  );
}

function retention(
  subject: string,
  settings: SetupSettings,
  maxDeliveryCount: number,
  lockSeconds: number | undefined,
  ttlSeconds: number | undefined,
): CheckResult {
  const property = 'marker retention (INBOX_MARKER_TTL_SECONDS) against its real properties';
  if (lockSeconds === undefined || ttlSeconds === undefined)
    return compare(subject, property, 'a lock duration and time-to-live to compute with', 'durations it cannot read', false, 'see the lines above');
  const check = checkMarkerRetention({
    markerTtlSeconds: settings.markerTtlSeconds,
    maxDeliveryCount,
    lockDurationSeconds: lockSeconds,
    lockRenewalMaxSeconds: settings.queue.lockRenewalMaxSeconds,
    messageTimeToLiveSeconds: ttlSeconds,
    retryBudgetSeconds: settings.retryBudgetSeconds,
    resubmitHorizonSeconds: settings.queue.resubmitHorizonSeconds,
  });
  const expected = `at least ${describeSeconds(check.requiredSeconds)}`;
  return compare(
    subject,
    property,
    expected,
    describeSeconds(settings.markerTtlSeconds),
    check.ok,
    check.ok ? '' : `${check.explanation}: raise INBOX_MARKER_TTL_SECONDS, or lower the queue's delivery count, lock or time-to-live`,
  );
}

function sameFilter(rule: ExpectedRule, filter: object): boolean {
  if ('sqlExpression' in rule) return normalSql(fieldOf(filter, 'sqlExpression')) === normalSql(rule.sqlExpression);
  return fieldOf(filter, 'sqlExpression') === undefined && JSON.stringify(correlationFields(filter)) === JSON.stringify(sorted(rule.correlation));
}

function matchesNothing(rule: FoundRule): boolean {
  const sql = normalSql(fieldOf(rule.filter, 'sqlExpression'));
  return sql === '1=0' || sql === '1 = 0';
}

function describeExpectedRule(rule: ExpectedRule): string {
  return 'sqlExpression' in rule ? `SQL filter "${rule.sqlExpression}"` : `correlation filter ${JSON.stringify(rule.correlation)}`;
}

function describeFilter(filter: object): string {
  const sql = fieldOf(filter, 'sqlExpression');
  return typeof sql === 'string' ? `SQL filter "${sql}"` : `correlation filter ${JSON.stringify(correlationFields(filter))}`;
}

/** The fields a correlation filter sets, sorted (the SDK reports unset ones as undefined). */
function correlationFields(filter: object): Record<string, unknown> {
  const set = Object.entries(filter).filter(
    ([key, value]) => key !== 'sqlParameters' && value !== undefined && !(key === 'applicationProperties' && Object.keys(value as object).length === 0),
  );
  return sorted(Object.fromEntries(set));
}

function sorted(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => a.localeCompare(b)));
}

function fieldOf(filter: object, field: string): unknown {
  return (filter as Record<string, unknown>)[field];
}

function normalSql(expression: unknown): string | undefined {
  return typeof expression === 'string' ? expression.trim().replace(/\s+/g, ' ') : undefined;
}

function onOff(value: boolean): string {
  return value ? 'on' : 'off';
}
