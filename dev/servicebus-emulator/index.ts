export { startServiceBusEmulator } from './serviceBusEmulator.js';
export type { ServiceBusEmulator, ServiceBusEmulatorOptions } from './serviceBusEmulator.js';
export { azureDefaultQueueSettings, defaultQueueFilePath, loadQueueFile, toQueueSettings } from './queueDefinitions.js';
export type { QueueDefinition, QueueFile, QueueSettings } from './queueDefinitions.js';
export type { MessageEntity, StoredMessage } from './messageEntity.js';
