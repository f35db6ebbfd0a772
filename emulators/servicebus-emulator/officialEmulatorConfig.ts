import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { QueueSettings } from './entityTypes.js';
import type { TopicConfig } from './queueDefinitions.js';
import { defaultRule, sqlFilter } from './subscriptionRules.js';
import type { CorrelationFields, SubscriptionRule } from './subscriptionRules.js';

/**
 * The entity file of Microsoft's Service Bus emulator (its `Config.json`: `UserConfig.Namespaces[]`
 * with `Queues` and `Topics`, PascalCase properties, ISO 8601 durations), accepted as an alternative
 * to infra/servicebus-queues.json, so that its published samples run against this emulator as they
 * are. What this emulator lacks (sessions, auto-forwarding) is refused by name, never ignored.
 */
const isoDuration = z.string().regex(/^P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/, 'must be an ISO 8601 duration such as PT1M');
const unsupportedForward = z.string().max(0, 'auto-forwarding is not supported by this emulator').optional();
const unsupportedSession = z.literal(false, { error: 'sessions are not supported by this emulator yet' }).optional();

const queueProperties = z.object({
  DeadLetteringOnMessageExpiration: z.boolean().optional(),
  DefaultMessageTimeToLive: isoDuration.optional(),
  DuplicateDetectionHistoryTimeWindow: isoDuration.optional(),
  ForwardDeadLetteredMessagesTo: unsupportedForward,
  ForwardTo: unsupportedForward,
  LockDuration: isoDuration.optional(),
  MaxDeliveryCount: z.int().min(1).optional(),
  RequiresDuplicateDetection: z.boolean().optional(),
  RequiresSession: unsupportedSession,
});

const correlationFilter = z.object({
  ContentType: z.string().optional(),
  CorrelationId: z.string().optional(),
  Label: z.string().optional(),
  MessageId: z.string().optional(),
  ReplyTo: z.string().optional(),
  ReplyToSessionId: z.string().optional(),
  SessionId: z.string().optional(),
  To: z.string().optional(),
  Properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

const rule = z.object({
  Name: z.string().min(1),
  Properties: z.union([
    z.object({ FilterType: z.literal('Correlation'), CorrelationFilter: correlationFilter }),
    z.object({ FilterType: z.literal('Sql'), SqlFilter: z.object({ SqlExpression: z.string().min(1) }) }),
  ]),
});

const configSchema = z.object({
  UserConfig: z.object({
    Namespaces: z
      .array(
        z.object({
          Name: z.string(),
          Queues: z.array(z.object({ Name: z.string().min(1), Properties: queueProperties.optional() })).optional(),
          Topics: z
            .array(
              z.object({
                Name: z.string().min(1),
                Properties: z
                  .object({
                    DefaultMessageTimeToLive: isoDuration.optional(),
                    DuplicateDetectionHistoryTimeWindow: isoDuration.optional(),
                    RequiresDuplicateDetection: z.boolean().optional(),
                  })
                  .optional(),
                Subscriptions: z
                  .array(
                    z.object({
                      Name: z.string().min(1),
                      Properties: queueProperties.omit({ RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: true }).optional(),
                      Rules: z.array(rule).optional(),
                    }),
                  )
                  .optional(),
              }),
            )
            .optional(),
        }),
      )
      .min(1),
    Logging: z.unknown().optional(),
  }),
});

/** The official emulator's defaults for a property a Config.json leaves out (Azure's for a new entity). */
const defaults = { lockDurationMs: 60_000, maxDeliveryCount: 10, ttlMs: 14 * 24 * 3600_000, duplicateWindowMs: 600_000 };

export function isoDurationMs(duration: string): number {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(duration);
  if (!match) throw new Error(`${duration} is not an ISO 8601 duration`);
  const [, d = '0', h = '0', m = '0', s = '0'] = match;
  return Math.round(((Number(d) * 24 + Number(h)) * 60 + Number(m)) * 60_000 + Number(s) * 1000);
}

export function loadOfficialEmulatorConfig(path: string): { queues: Record<string, QueueSettings>; topics: Record<string, TopicConfig> } {
  const parsed = configSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`${path} is not a Service Bus emulator Config.json this emulator can serve: ${problems}`);
  }
  const queues: Record<string, QueueSettings> = {};
  const topics: Record<string, TopicConfig> = {};
  for (const namespace of parsed.data.UserConfig.Namespaces) {
    for (const queue of namespace.Queues ?? []) queues[queue.Name] = queueSettingsOf(queue.Properties ?? {});
    for (const topic of namespace.Topics ?? []) {
      const p = topic.Properties ?? {};
      const ttlMs = p.DefaultMessageTimeToLive ? isoDurationMs(p.DefaultMessageTimeToLive) : defaults.ttlMs;
      topics[topic.Name] = {
        settings: {
          defaultMessageTimeToLiveMs: ttlMs,
          duplicateDetectionWindowMs: p.RequiresDuplicateDetection
            ? p.DuplicateDetectionHistoryTimeWindow
              ? isoDurationMs(p.DuplicateDetectionHistoryTimeWindow)
              : defaults.duplicateWindowMs
            : 0,
        },
        subscriptions: Object.fromEntries(
          (topic.Subscriptions ?? []).map((sub) => {
            const settings = queueSettingsOf(sub.Properties ?? {});
            const rules: SubscriptionRule[] = sub.Rules?.length ? sub.Rules.map(ruleOf) : [defaultRule];
            return [
              sub.Name,
              {
                settings: { ...settings, defaultMessageTimeToLiveMs: Math.min(settings.defaultMessageTimeToLiveMs, ttlMs), duplicateDetectionWindowMs: 0 },
                rules,
              },
            ];
          }),
        ),
      };
    }
  }
  return { queues, topics };
}

function queueSettingsOf(p: z.infer<typeof queueProperties>): QueueSettings {
  return {
    lockDurationMs: p.LockDuration ? isoDurationMs(p.LockDuration) : defaults.lockDurationMs,
    maxDeliveryCount: p.MaxDeliveryCount ?? defaults.maxDeliveryCount,
    defaultMessageTimeToLiveMs: p.DefaultMessageTimeToLive ? isoDurationMs(p.DefaultMessageTimeToLive) : defaults.ttlMs,
    duplicateDetectionWindowMs: p.RequiresDuplicateDetection
      ? p.DuplicateDetectionHistoryTimeWindow
        ? isoDurationMs(p.DuplicateDetectionHistoryTimeWindow)
        : defaults.duplicateWindowMs
      : 0,
    deadLetteringOnMessageExpiration: p.DeadLetteringOnMessageExpiration ?? false,
  };
}

function ruleOf(r: z.infer<typeof rule>): SubscriptionRule {
  if (r.Properties.FilterType === 'Sql') return { name: r.Name, filter: sqlFilter(r.Properties.SqlFilter.SqlExpression) };
  const c = r.Properties.CorrelationFilter;
  const fields: CorrelationFields = {
    contentType: c.ContentType,
    correlationId: c.CorrelationId,
    subject: c.Label,
    messageId: c.MessageId,
    replyTo: c.ReplyTo,
    replyToSessionId: c.ReplyToSessionId,
    sessionId: c.SessionId,
    to: c.To,
    applicationProperties: c.Properties,
  };
  return { name: r.Name, filter: { kind: 'correlation', fields } };
}
