import type { ServiceBusReceivedMessage } from '@azure/service-bus';

/**
 * The bytes of a received message's data section, as the sender wrote them; undefined for an AMQP
 * value or sequence body. The SDK's `body` is not them: it runs JSON.parse on every data body it can
 * (its tryToJsonDecode, whatever the content type), so serialising `body` again changes the bytes and
 * recurses through whatever depth the sender chose. The raw message holds the section itself (rhea's
 * `Section`, the bytes in `content`) or, in other versions, the bytes.
 */
export function dataBodyBytes(m: ServiceBusReceivedMessage): Uint8Array | undefined {
  const raw = m._rawAmqpMessage as { bodyType?: string; body?: unknown } | undefined;
  if (raw?.bodyType !== 'data') return undefined;
  if (raw.body instanceof Uint8Array) return raw.body;
  const content = (raw.body as { content?: unknown } | undefined)?.content;
  return content instanceof Uint8Array ? content : undefined;
}
