import { describe, expect, it } from 'vitest';
import { TransientSendError } from '../../src/outbox/index.js';
import { CarrierUnavailableError } from '../../src/shipments/carrierClient.js';

describe('the errors the outbox and the carrier client throw', () => {
  it('carry their names, so logs and the retry layers can tell them apart', () => {
    expect(new TransientSendError('order-events', new Error('ServiceBusy')).name).toBe('TransientSendError');
    expect(new CarrierUnavailableError('503 from the carrier', 503).name).toBe('CarrierUnavailableError');
  });

  it('say which destination failed and why, whatever was thrown', () => {
    expect(new TransientSendError('order-events', new Error('ServiceBusy')).message).toBe('sending to order-events failed for now: ServiceBusy');
    expect(new TransientSendError('order-events', 'socket closed').message).toBe('sending to order-events failed for now: socket closed');
    expect(new TransientSendError('order-events', undefined).message).toBe('sending to order-events failed for now: undefined');
  });
});
