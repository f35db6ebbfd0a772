import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { describe, expect, it } from 'vitest';
import { dataBodyBytes } from '../../../src/servicebus/index.js';

const withRaw = (raw: unknown) => ({ body: { parsed: true }, _rawAmqpMessage: raw }) as unknown as ServiceBusReceivedMessage;

describe('dataBodyBytes', () => {
  it('reads the bytes of a data section, held as a section or as the bytes themselves', () => {
    expect(Buffer.from(dataBodyBytes(withRaw({ bodyType: 'data', body: { typecode: 117, content: Buffer.from('{"a":1}') } })) ?? []).toString()).toBe(
      '{"a":1}',
    );
    expect(Buffer.from(dataBodyBytes(withRaw({ bodyType: 'data', body: Buffer.from('x') })) ?? []).toString()).toBe('x');
  });

  it('has none for a value or sequence body, a section without bytes, or no raw message', () => {
    expect(dataBodyBytes(withRaw({ bodyType: 'value', body: Buffer.from('x') }))).toBeUndefined();
    expect(dataBodyBytes(withRaw({ bodyType: 'data', body: { content: 'text' } }))).toBeUndefined();
    expect(dataBodyBytes(withRaw({ bodyType: 'data' }))).toBeUndefined();
    expect(dataBodyBytes(withRaw(undefined))).toBeUndefined();
  });
});
