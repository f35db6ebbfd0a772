import type { ServiceBusReceivedMessage } from '@azure/service-bus';

/**
 * The bytes of a received message's data section, as the sender wrote them (what the host's .NET
 * client hands the host); undefined for an AMQP value or sequence body. The JS SDK's `body` is not
 * them: it runs JSON.parse on every data body it can, whatever the content type. The raw message
 * holds the section itself (rhea's `Section`, the bytes in `content`) or, in other versions, the bytes.
 */
export function dataSectionBytes(m: ServiceBusReceivedMessage): Uint8Array | undefined {
  const raw = m._rawAmqpMessage as { bodyType?: string; body?: unknown } | undefined;
  if (raw?.bodyType !== 'data') return undefined;
  if (raw.body instanceof Uint8Array) return raw.body;
  const content = (raw.body as { content?: unknown } | undefined)?.content;
  return content instanceof Uint8Array ? content : undefined;
}
