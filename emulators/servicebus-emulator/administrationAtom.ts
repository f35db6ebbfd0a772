import type { QueueSettings, TopicSettings } from './entityTypes.js';
import type { CorrelationFields, RuleFilter, SubscriptionRule } from './subscriptionRules.js';

/**
 * The ATOM entries of Service Bus's administration REST API (the one `ServiceBusAdministrationClient`
 * speaks, api-version 2021-05), as the service writes them: an Atom `<entry>` whose `<id>` is the
 * entity's URL (the SDK takes the queue, topic, subscription and rule names from its path), with a
 * `QueueDescription`, `TopicDescription`, `SubscriptionDescription` or `RuleDescription` in the
 * `connect` namespace as its content. Elements are in the service's order; every one the SDK
 * requires (it throws on a missing `LockDuration`, `EnableExpress`, `Status`, ...) is present.
 */
const atom = 'http://www.w3.org/2005/Atom';
const connect = 'http://schemas.microsoft.com/netservices/2010/10/servicebus/connect';
const instance = 'http://www.w3.org/2001/XMLSchema-instance';
/** What Service Bus reports for "never": TimeSpan.MaxValue. */
const forever = 'P10675199DT2H48M5.4775807S';
/** Standard's queue and topic size; the emulator has no limit of its own. */
const maxSizeInMegabytes = 1024;

export interface AtomContext {
  /** `https://host:port`, as the request named it. */
  readonly baseUrl: string;
  /** When the emulator started: every entity's CreatedAt, UpdatedAt and AccessedAt. */
  readonly startedAt: string;
}

export function queueEntry(ctx: AtomContext, name: string, s: QueueSettings): string {
  const description = element('QueueDescription', [
    text('LockDuration', isoDuration(s.lockDurationMs)),
    text('MaxSizeInMegabytes', maxSizeInMegabytes),
    text('RequiresDuplicateDetection', s.duplicateDetectionWindowMs > 0),
    text('RequiresSession', s.requiresSession === true),
    text('DefaultMessageTimeToLive', isoDuration(s.defaultMessageTimeToLiveMs)),
    text('DeadLetteringOnMessageExpiration', s.deadLetteringOnMessageExpiration),
    // Azure keeps the window (10 minutes unless set) while detection is off; the emulator keeps none.
    text('DuplicateDetectionHistoryTimeWindow', isoDuration(s.duplicateDetectionWindowMs > 0 ? s.duplicateDetectionWindowMs : 600_000)),
    text('MaxDeliveryCount', s.maxDeliveryCount),
    text('EnableBatchedOperations', true),
    text('IsAnonymousAccessible', false),
    '<AuthorizationRules/>',
    text('Status', 'Active'),
    ...timestamps(ctx),
    text('SupportOrdering', true),
    text('AutoDeleteOnIdle', forever),
    text('EnablePartitioning', false),
    text('EntityAvailabilityStatus', 'Available'),
    text('EnableExpress', false),
    text('MaxMessageSizeInKilobytes', Math.round((s.maxMessageSizeBytes ?? 256 * 1024) / 1024)),
  ]);
  return entry(ctx, name, description);
}

export function topicEntry(ctx: AtomContext, name: string, s: TopicSettings, subscriptionCount: number): string {
  const description = element('TopicDescription', [
    text('DefaultMessageTimeToLive', isoDuration(s.defaultMessageTimeToLiveMs)),
    text('MaxSizeInMegabytes', maxSizeInMegabytes),
    text('RequiresDuplicateDetection', s.duplicateDetectionWindowMs > 0),
    text('DuplicateDetectionHistoryTimeWindow', isoDuration(s.duplicateDetectionWindowMs > 0 ? s.duplicateDetectionWindowMs : 600_000)),
    text('EnableBatchedOperations', true),
    text('FilteringMessagesBeforePublishing', false),
    text('IsAnonymousAccessible', false),
    '<AuthorizationRules/>',
    text('Status', 'Active'),
    ...timestamps(ctx),
    text('SupportOrdering', true),
    text('SubscriptionCount', subscriptionCount),
    text('AutoDeleteOnIdle', forever),
    text('EnablePartitioning', false),
    text('EntityAvailabilityStatus', 'Available'),
    text('EnableSubscriptionPartitioning', false),
    text('EnableExpress', false),
    text('MaxMessageSizeInKilobytes', Math.round((s.maxMessageSizeBytes ?? 256 * 1024) / 1024)),
  ]);
  return entry(ctx, name, description);
}

export function subscriptionEntry(ctx: AtomContext, topic: string, name: string, s: QueueSettings): string {
  const description = element('SubscriptionDescription', [
    text('LockDuration', isoDuration(s.lockDurationMs)),
    text('RequiresSession', s.requiresSession === true),
    text('DefaultMessageTimeToLive', isoDuration(s.defaultMessageTimeToLiveMs)),
    text('DeadLetteringOnMessageExpiration', s.deadLetteringOnMessageExpiration),
    text('DeadLetteringOnFilterEvaluationExceptions', true),
    text('MaxDeliveryCount', s.maxDeliveryCount),
    text('EnableBatchedOperations', true),
    text('Status', 'Active'),
    ...timestamps(ctx),
    text('AutoDeleteOnIdle', forever),
    text('EntityAvailabilityStatus', 'Available'),
  ]);
  return entry(ctx, `${topic}/Subscriptions/${name}`, description);
}

export function ruleEntry(ctx: AtomContext, topic: string, subscription: string, rule: SubscriptionRule): string {
  const description = element('RuleDescription', [
    filterElement(rule.filter),
    rule.action
      ? `<Action i:type="SqlRuleAction">${text('SqlExpression', rule.action.expression)}${text('CompatibilityLevel', 20)}</Action>`
      : '<Action i:type="EmptyRuleAction"/>',
    text('CreatedAt', ctx.startedAt),
    text('Name', rule.name),
  ]);
  return entry(ctx, `${topic}/Subscriptions/${subscription}/Rules/${rule.name}`, description);
}

/** A list (`$Resources/Queues`, a subscription's `Rules`), or the empty feed Service Bus answers for a missing entity. */
export function feed(ctx: AtomContext, path: string, entries: readonly string[]): string {
  return `<?xml version="1.0" encoding="utf-8"?><feed xmlns="${atom}"><title type="text">${escape(path)}</title><id>${escape(`${ctx.baseUrl}/${path}`)}</id><updated>${ctx.startedAt}</updated>${entries.join('')}</feed>`;
}

/** The error body Service Bus sends with a 4xx; the SDK reads `Error.Detail` into the error's message. */
export function errorBody(status: number, detail: string): string {
  return `<Error><Code>${status}</Code><Detail>${escape(detail)}</Detail></Error>`;
}

function filterElement(filter: RuleFilter): string {
  switch (filter.kind) {
    case 'true':
      return `<Filter i:type="TrueFilter">${text('SqlExpression', '1=1')}${text('CompatibilityLevel', 20)}</Filter>`;
    case 'false':
      return `<Filter i:type="FalseFilter">${text('SqlExpression', '1=0')}${text('CompatibilityLevel', 20)}</Filter>`;
    case 'sql':
      return `<Filter i:type="SqlFilter">${text('SqlExpression', filter.expression)}${text('CompatibilityLevel', 20)}</Filter>`;
    case 'correlation':
      return `<Filter i:type="CorrelationFilter">${correlationFields(filter.fields)}</Filter>`;
  }
}

const correlationOrder: readonly [keyof CorrelationFields, string][] = [
  ['correlationId', 'CorrelationId'],
  ['messageId', 'MessageId'],
  ['to', 'To'],
  ['replyTo', 'ReplyTo'],
  ['subject', 'Label'],
  ['sessionId', 'SessionId'],
  ['replyToSessionId', 'ReplyToSessionId'],
  ['contentType', 'ContentType'],
];

function correlationFields(fields: CorrelationFields): string {
  const named = correlationOrder.map(([key, tag]) => (typeof fields[key] === 'string' ? text(tag, fields[key]) : '')).join('');
  const pairs = Object.entries(fields.applicationProperties ?? {}).map(([key, value]) => {
    // The SDK reads the type after a four-letter prefix ("d6p1:string").
    const type =
      typeof value === 'string'
        ? 'string'
        : typeof value === 'boolean'
          ? 'boolean'
          : value instanceof Date
            ? 'dateTime'
            : Number.isInteger(value)
              ? 'int'
              : 'double';
    const shown = value instanceof Date ? value.toISOString() : String(value);
    return `<KeyValueOfstringanyType>${text('Key', key)}<Value i:type="d6p1:${type}" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">${escape(shown)}</Value></KeyValueOfstringanyType>`;
  });
  return `${named}<Properties>${pairs.join('')}</Properties>`;
}

function entry(ctx: AtomContext, path: string, description: string): string {
  const url = `${ctx.baseUrl}/${path}?api-version=2021-05`;
  const title = path.split('/').pop() ?? path;
  return (
    `<entry xmlns="${atom}"><id>${escape(url)}</id><title type="text">${escape(title)}</title>` +
    `<published>${ctx.startedAt}</published><updated>${ctx.startedAt}</updated><author><name>emulator</name></author>` +
    `<link rel="self" href="${escape(url)}"/><content type="application/xml">${description}</content></entry>`
  );
}

function element(name: string, children: readonly string[]): string {
  return `<${name} xmlns="${connect}" xmlns:i="${instance}">${children.join('')}</${name}>`;
}

function timestamps(ctx: AtomContext): string[] {
  return [text('CreatedAt', ctx.startedAt), text('UpdatedAt', ctx.startedAt), text('AccessedAt', ctx.startedAt)];
}

function text(name: string, value: string | number | boolean): string {
  return `<${name}>${escape(String(value))}</${name}>`;
}

function escape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Milliseconds as .NET writes a TimeSpan in XML: 60000 -> PT1M, 1209600000 -> P14D, 90500 -> PT1M30.5S. */
export function isoDuration(ms: number): string {
  const days = Math.floor(ms / 86_400_000);
  const hours = Math.floor((ms % 86_400_000) / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
  if (!days && !time) return 'PT0S';
  return `P${days ? `${days}D` : ''}${time ? `T${time}` : ''}`;
}
