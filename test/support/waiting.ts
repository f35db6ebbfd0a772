import { waitUntil } from '../../dev/local/waitUntil.js';
import type { QueueSettings } from '../../emulators/servicebus-emulator/index.js';

/** Polls until the condition holds; fails naming what it waited for. */
export function eventually(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  return waitUntil(what, condition, timeoutMs);
}

/** An emulator queue for end-to-end tests: duplicate detection and dead-lettering on, as in infra/servicebus-queues.json. */
export function testQueue(overrides: Partial<QueueSettings>): QueueSettings {
  return {
    lockDurationMs: 30_000,
    maxDeliveryCount: 10,
    defaultMessageTimeToLiveMs: 3_600_000,
    duplicateDetectionWindowMs: 600_000,
    deadLetteringOnMessageExpiration: true,
    ...overrides,
  };
}
