import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';

/** When the flood's first message was enqueued; message n came n ms later. */
export const floodStart = Date.parse('2026-12-04T08:00:00Z');

/**
 * A queue (or dead-letter queue) of `total` messages, made as they are peeked, so a test can hold a
 * million: message n has sequence number n and MessageId `m-<n>`, then whatever `message(n)` adds.
 * The test fails when the tool peeks past `limit`: an unbounded read shows as a failure, not a hang.
 */
export function floodedQueue(total: number, message: (n: number) => Partial<ServiceBusReceivedMessage> = () => ({}), limit = 200_000) {
  let peeked = 0;
  const receiver = {
    peekMessages: async (max: number, options?: { fromSequenceNumber?: Long }) => {
      const from = options?.fromSequenceNumber?.toNumber() ?? 0;
      const page: ServiceBusReceivedMessage[] = [];
      for (let n = Math.max(from, 1); n <= total && page.length < max; n += 1)
        page.push({
          sequenceNumber: Long.fromNumber(n),
          messageId: `m-${n}`,
          enqueuedTimeUtc: new Date(floodStart + n),
          body: {},
          applicationProperties: {},
          ...message(n),
        } as ServiceBusReceivedMessage);
      peeked += page.length;
      if (peeked > limit) throw new Error(`the tool peeked past ${limit} messages`);
      return page;
    },
    close: async () => undefined,
  } as unknown as ServiceBusReceiver;
  return { receiver, peeked: () => peeked };
}
