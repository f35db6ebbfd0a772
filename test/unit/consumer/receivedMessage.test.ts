import { describe, expect, it } from 'vitest';
import { idempotencyKeyProperty, readReceivedMessage } from '../../../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';

// The key a delayed-retry copy is named by (readReceivedMessage's retryKey): taken from the entrance's
// reading of the body, and from the body itself only when the reading refused it.
const cloudEvent = { specversion: '1.0', id: 'evt-1', source: '/shop', type: 'OrderPlaced', datacontenttype: 'application/json', data: { orderId: 'o-1' } };
const structured = (properties: Record<string, unknown> = {}) =>
  envelopeFromTriggerMetadata({ messageId: 'm-1', contentType: 'application/cloudevents+json', deliveryCount: 1, applicationProperties: properties });

describe('the retry key of a received message', () => {
  it('is the CloudEvent source and id of a body read whole', () => {
    expect(readReceivedMessage(structured(), cloudEvent, 100_000).retryKey()).toBe('/shop|evt-1');
  });

  it('is still the CloudEvent source and id of a body refused for its size: the body is walked again, unbounded, for its key', () => {
    const big = { ...cloudEvent, data: { orderId: 'o-1', pad: 'x'.repeat(500) } };
    const message = readReceivedMessage(structured(), big, 100);
    expect('unreadable' in message.content).toBe(true);
    expect(message.retryKey()).toBe('/shop|evt-1');
  });

  it('is no key when the declared idempotency-key is unusable, rather than a refusal thrown at the retry layer', () => {
    expect(readReceivedMessage(structured({ [idempotencyKeyProperty]: '' }), cloudEvent, 100_000).retryKey()).toBeUndefined();
  });

  it('is derived once, however often it is asked for', () => {
    const message = readReceivedMessage(structured(), cloudEvent, 100_000);
    expect([message.retryKey(), message.retryKey()]).toEqual(['/shop|evt-1', '/shop|evt-1']);
  });
});
