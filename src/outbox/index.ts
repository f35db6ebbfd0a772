export { createOutboxPublisher } from './createOutboxPublisher.js';
export type { OutboxPublisher, OutboxPublisherOverrides } from './createOutboxPublisher.js';
export { TransientSendError } from './eventSender.js';
export type { EventSender, SendOutcome } from './eventSender.js';
export {
  isPendingOutbox,
  maxMessageIdLength,
  messageIdFor,
  messageIdNamingBody,
  newOutboxDocument,
  orderEventsSource,
  orderIntakeSource,
} from './outboxDocument.js';
export type { NewOutboxEvent, OutboxDocument, OutboxMessage, OutboxState } from './outboxDocument.js';
export { TransientPublishError, publishOutboxEntries } from './publishOutbox.js';
export type { PublishContext, PublishResult } from './publishOutbox.js';
export { ServiceBusEventSender, isRefusal, toServiceBusMessage } from './serviceBusEventSender.js';
export { sweepOutbox } from './sweepOutbox.js';
export type { OutboxSweepResult } from './sweepOutbox.js';
