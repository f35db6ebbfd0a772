/**
 * The types the emulator's entities share: a message as a sender gave it, and a queue's and a
 * topic's settings. It imports nothing, so that the entities, the rules and the queue file can all
 * depend on it without depending on each other.
 */

/** The AMQP message as a sender gave it (rhea's shape); the broker adds its own annotations on the wire. */
export interface AmqpMessage {
  message_id?: string | number | Buffer;
  ttl?: number;
  application_properties?: Record<string, unknown>;
  message_annotations?: Record<string, unknown>;
  [field: string]: unknown;
}

/** The emulator's own form of a queue's properties: milliseconds, as its timers use them. */
export interface QueueSettings {
  readonly lockDurationMs: number;
  readonly maxDeliveryCount: number;
  readonly defaultMessageTimeToLiveMs: number;
  /** 0 when duplicate detection is off. */
  readonly duplicateDetectionWindowMs: number;
  readonly deadLetteringOnMessageExpiration: boolean;
  /** The largest message a send may carry; Standard's 256 KB when unset. */
  readonly maxMessageSizeBytes?: number;
  /** Session-enabled: messages are kept and delivered per SessionId, one receiver per session. */
  readonly requiresSession?: boolean;
}

/** A topic's own properties; each subscription has its queue-like ones. */
export interface TopicSettings {
  readonly defaultMessageTimeToLiveMs: number;
  /** 0 when duplicate detection is off; it is the topic's, for every subscription. */
  readonly duplicateDetectionWindowMs: number;
  readonly maxMessageSizeBytes?: number;
}
