export {
  applicationProperty,
  envelopeFromInvocation,
  envelopeFromTriggerMetadata,
  refuseAmbiguousPropertyNames,
  withoutFieldsTheBodyMayHaveWritten,
} from './envelope.js';
export type { MessageEnvelope } from './envelope.js';
export { unwrapCloudEvent } from './cloudEvents.js';
export type { CloudEventAttributes, UnwrappedBody } from './cloudEvents.js';
export { decodeJsonBody, maxJsonDepth, refusingUnreadable } from './messageBody.js';
export { ServiceBusRetryScheduler, chooseServiceBusClient } from './retryScheduler.js';
export type { RetryScheduler, ScheduledCopy, ServiceBusClientChoice, ServiceBusConnectionSettings } from './retryScheduler.js';
export { deriveMessageId, maxDerivedSuffixLength, maxMessageIdLength } from './derivedMessageId.js';
export { earliestInstant, firstEnqueuedAtProperty } from './messageLineage.js';
export { dataBodyBytes } from './receivedBody.js';
export type { DerivationOptions } from './derivedMessageId.js';
