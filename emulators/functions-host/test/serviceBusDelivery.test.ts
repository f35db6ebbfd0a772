import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import { deliveryOf } from '../localFunctionsHost.js';

// What the local host hands the worker for a message body. The Functions host binds a Service Bus body
// for a Node function as the UTF-8 text of its bytes (azure-functions-nodejs-worker#684); the JS SDK
// the local host receives with has already run JSON.parse on it (its tryToJsonDecode, for any data
// body), so the host must go back to the bytes rather than serialise that value again.
const received = (body: unknown, raw?: { bodyType: 'data' | 'value'; body: unknown }): ServiceBusReceivedMessage =>
  ({
    body,
    messageId: 'm-1',
    sequenceNumber: Long.fromNumber(1),
    deliveryCount: 0,
    ...(raw ? { _rawAmqpMessage: raw } : {}),
  }) as unknown as ServiceBusReceivedMessage;

describe('deliveryOf', () => {
  it('hands over the bytes of a data body as their text, however deep the JSON the SDK parsed from them', () => {
    const text = `{"orderId":"o-1","lines":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    const parsedBySdk = JSON.parse(text) as unknown;
    // As @azure/service-bus 7.9 holds it: rhea's data Section, the bytes in `content`.
    expect(deliveryOf(received(parsedBySdk, { bodyType: 'data', body: { typecode: 117, content: Buffer.from(text) } })).body).toBe(text);
    expect(deliveryOf(received(parsedBySdk, { bodyType: 'data', body: Buffer.from(text) })).body).toBe(text);
  });

  it('hands over a data body that is not JSON as its text too, as the host binds it', () => {
    expect(deliveryOf(received(Buffer.from('plain words'), { bodyType: 'data', body: Buffer.from('plain words') })).body).toBe('plain words');
  });

  it('keeps a string, and serialises a value-section body the SDK decoded', () => {
    expect(deliveryOf(received('text')).body).toBe('text');
    expect(deliveryOf(received({ orderId: 'o-1' }, { bodyType: 'value', body: { orderId: 'o-1' } })).body).toBe('{"orderId":"o-1"}');
  });
});
