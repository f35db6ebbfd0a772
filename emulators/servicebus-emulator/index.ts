export { startServiceBusEmulator } from './serviceBusEmulator.js';
export type { ServiceBusEmulator, ServiceBusEmulatorOptions } from './serviceBusEmulator.js';
export { azureDefaultQueueSettings, defaultQueueFilePath, loadQueueFile, toQueueSettings, toTopicConfig } from './queueDefinitions.js';
export type { QueueDefinition, QueueFile, QueueSettings, SubscriptionDefinition, TopicConfig, TopicDefinition } from './queueDefinitions.js';
export { defaultRule, parseSqlFilter, sqlFilter, SqlFilterSyntaxError } from './subscriptionRules.js';
export type { CorrelationFields, RuleFilter, SubscriptionRule } from './subscriptionRules.js';
export type { TopicEntity, TopicSettings } from './topicEntity.js';
export type { MessageEntity, StoredMessage } from './messageEntity.js';
export { isoDurationMs, loadOfficialEmulatorConfig } from './officialEmulatorConfig.js';
