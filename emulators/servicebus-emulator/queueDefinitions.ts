import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { QueueSettings, TopicSettings } from './entityTypes.js';
import { SqlFilterSyntaxError } from './sqlSyntax.js';
import { defaultRule, sqlFilter } from './subscriptionRules.js';
import type { SubscriptionRule } from './subscriptionRules.js';

/**
 * One queue's properties, named as in Service Bus, with units in the names. The same file
 * (infra/servicebus-queues.json) is loaded by the Bicep template, so a local queue and its Azure
 * twin have the same lock duration, delivery limit, time-to-live and duplicate detection.
 */
const queueDefinitionSchema = z.object({
  lockDurationSeconds: z.int().min(5).max(300),
  maxDeliveryCount: z.int().min(1),
  defaultMessageTimeToLiveSeconds: z.int().min(1),
  requiresDuplicateDetection: z.boolean(),
  duplicateDetectionHistoryTimeWindowSeconds: z
    .int()
    .min(20)
    .max(7 * 24 * 3600),
  deadLetteringOnMessageExpiration: z.boolean(),
  /** Premium only (1024 to 102400); Standard's limit is 256 KB. */
  maxMessageSizeInKilobytes: z.int().min(1024).max(102_400).optional(),
  /** Sessions: every message needs a SessionId, and a receiver locks one session at a time. */
  requiresSession: z.boolean().optional(),
});

const entityName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$/);

const correlationFilterSchema = z.strictObject({
  correlationId: z.string().optional(),
  messageId: z.string().optional(),
  to: z.string().optional(),
  replyTo: z.string().optional(),
  subject: z.string().optional(),
  sessionId: z.string().optional(),
  replyToSessionId: z.string().optional(),
  contentType: z.string().optional(),
  applicationProperties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** A rule: a SQL filter or a correlation filter (Bicep creates the same rule in Azure). */
const ruleSchema = z.union([z.strictObject({ sqlFilter: z.string().trim().min(1) }), z.strictObject({ correlationFilter: correlationFilterSchema })]);

const subscriptionDefinitionSchema = z.object({
  lockDurationSeconds: z.int().min(5).max(300),
  maxDeliveryCount: z.int().min(1),
  defaultMessageTimeToLiveSeconds: z.int().min(1),
  deadLetteringOnMessageExpiration: z.boolean(),
  requiresSession: z.boolean().optional(),
  /** Without rules, the subscription has `$Default` (every message). */
  rules: z.record(entityName, ruleSchema).optional(),
});

const topicDefinitionSchema = z.object({
  defaultMessageTimeToLiveSeconds: z.int().min(1),
  requiresDuplicateDetection: z.boolean(),
  duplicateDetectionHistoryTimeWindowSeconds: z
    .int()
    .min(20)
    .max(7 * 24 * 3600),
  maxMessageSizeInKilobytes: z.int().min(1024).max(102_400).optional(),
  subscriptions: z.record(entityName, subscriptionDefinitionSchema),
});

const queueFileSchema = z.object({
  queues: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,259}$/), queueDefinitionSchema),
  topics: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,259}$/), topicDefinitionSchema).default({}),
  operations: z.object({
    deadLetterResubmitHorizonSeconds: z.int().min(0),
    // host.json's maxAutoLockRenewalDuration in seconds (a test keeps the two equal).
    lockRenewalMaxSeconds: z.int().min(0),
    transientRetryBudgetSeconds: z.int().min(0),
    inboxMarkerTtlSeconds: z.int().min(1),
  }),
});

export type QueueDefinition = z.infer<typeof queueDefinitionSchema>;
export type TopicDefinition = z.infer<typeof topicDefinitionSchema>;
export type SubscriptionDefinition = z.infer<typeof subscriptionDefinitionSchema>;

/** The emulator's form of a topic: its settings, and each subscription's queue settings and rules. */
export interface TopicConfig {
  readonly settings: TopicSettings;
  readonly subscriptions: Readonly<Record<string, { readonly settings: QueueSettings; readonly rules: readonly SubscriptionRule[] }>>;
}
export type QueueFile = z.infer<typeof queueFileSchema>;

/** Service Bus Standard's limit on one message (Premium's is set per entity). */
export const standardMaxMessageSizeBytes = 256 * 1024;

export const defaultQueueFilePath = join(__dirname, '..', '..', 'infra', 'servicebus-queues.json');

export function loadQueueFile(path = defaultQueueFilePath): QueueFile {
  const parsed = queueFileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`${path} is not a valid queue definition file: ${problems}`);
  }
  // A SQL filter Service Bus would refuse is refused here, naming the rule, not at the first message.
  for (const [topic, definition] of Object.entries(parsed.data.topics)) {
    try {
      toTopicConfig(definition);
    } catch (error) {
      if (error instanceof SqlFilterSyntaxError) throw new Error(`${path}: topic ${topic}: ${error.message}`);
      throw error;
    }
  }
  return parsed.data;
}

export function toQueueSettings(definition: QueueDefinition): QueueSettings {
  return {
    lockDurationMs: definition.lockDurationSeconds * 1000,
    maxDeliveryCount: definition.maxDeliveryCount,
    defaultMessageTimeToLiveMs: definition.defaultMessageTimeToLiveSeconds * 1000,
    duplicateDetectionWindowMs: definition.requiresDuplicateDetection ? definition.duplicateDetectionHistoryTimeWindowSeconds * 1000 : 0,
    deadLetteringOnMessageExpiration: definition.deadLetteringOnMessageExpiration,
    ...(definition.maxMessageSizeInKilobytes === undefined ? {} : { maxMessageSizeBytes: definition.maxMessageSizeInKilobytes * 1024 }),
    ...(definition.requiresSession ? { requiresSession: true } : {}),
  };
}

/** What an entity created on the fly (a queue not in the file) gets: Azure's defaults for a new queue. */
export const azureDefaultQueueSettings: QueueSettings = {
  lockDurationMs: 60_000,
  maxDeliveryCount: 10,
  defaultMessageTimeToLiveMs: 14 * 24 * 3600 * 1000,
  duplicateDetectionWindowMs: 0,
  deadLetteringOnMessageExpiration: false,
};

export function toTopicConfig(definition: TopicDefinition): TopicConfig {
  const subscriptions = Object.fromEntries(
    Object.entries(definition.subscriptions).map(([name, sub]) => {
      const rules: SubscriptionRule[] = sub.rules
        ? Object.entries(sub.rules).map(([ruleName, rule]) => ({
            name: ruleName,
            filter: 'sqlFilter' in rule ? sqlFilter(rule.sqlFilter) : { kind: 'correlation', fields: rule.correlationFilter },
          }))
        : [defaultRule];
      const settings: QueueSettings = {
        lockDurationMs: sub.lockDurationSeconds * 1000,
        maxDeliveryCount: sub.maxDeliveryCount,
        defaultMessageTimeToLiveMs: Math.min(sub.defaultMessageTimeToLiveSeconds, definition.defaultMessageTimeToLiveSeconds) * 1000,
        // Duplicate detection is the topic's; a subscription has none of its own.
        duplicateDetectionWindowMs: 0,
        deadLetteringOnMessageExpiration: sub.deadLetteringOnMessageExpiration,
        ...(sub.requiresSession ? { requiresSession: true } : {}),
      };
      return [name, { settings, rules }];
    }),
  );
  return {
    settings: {
      defaultMessageTimeToLiveMs: definition.defaultMessageTimeToLiveSeconds * 1000,
      duplicateDetectionWindowMs: definition.requiresDuplicateDetection ? definition.duplicateDetectionHistoryTimeWindowSeconds * 1000 : 0,
      ...(definition.maxMessageSizeInKilobytes === undefined ? {} : { maxMessageSizeBytes: definition.maxMessageSizeInKilobytes * 1024 }),
    },
    subscriptions,
  };
}
