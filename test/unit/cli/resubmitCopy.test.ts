import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import { copyNonce, planResubmit } from '../../../src/cli/resubmitCopy.js';
import { refuseAmbiguousPropertyNames } from '../../../src/servicebus/index.js';

const now = Date.parse('2026-11-30T12:00:00Z');
const original = (overrides: Partial<ServiceBusReceivedMessage> = {}): ServiceBusReceivedMessage =>
  ({
    messageId: 'm-1',
    sequenceNumber: Long.fromNumber(42),
    body: { orderId: 'o-1' },
    contentType: 'application/json',
    subject: 'PaymentReceived',
    correlationId: 'c-1',
    enqueuedTimeUtc: new Date(now - 60_000),
    applicationProperties: { DeadLetterReason: 'MaxDeliveryCountExceeded', DeadLetterErrorDescription: 'x', tenant: 't1' },
    _rawAmqpMessage: { bodyType: 'data', body: Buffer.from('{"orderId":"o-1"}') },
    ...overrides,
  }) as unknown as ServiceBusReceivedMessage;

const options = { entityPath: 'orders', duplicateDetectionWindowMs: 600_000, nonce: 'n0' };

/** The data section the SDK (7.x dataTransformer.encode) makes of a ServiceBusMessage body: bytes as they are, anything else JSON-encoded. */
const asSentBySdk = (body: unknown): Buffer => (body instanceof Uint8Array ? Buffer.from(body) : Buffer.from(JSON.stringify(body ?? null), 'utf8'));

describe('planResubmit', () => {
  it('drops the delayed-retry properties and their signature, whatever their case, so a resubmitted copy starts its retry budget afresh', () => {
    const spent = {
      'retry-attempt': 30,
      'retry-first-failure-at': '2026-11-28T00:00:00.000Z',
      'retry-last-error': '503',
      'retry-of': 'm-1',
      'Retry-Signature': 'c2ln',
      'idempotency-key': 'm-1',
      tenant: 't1',
    };
    const { copy } = planResubmit(original({ applicationProperties: spent }), { ...options, dedupKey: 'm-1' });
    expect(Object.keys(copy.applicationProperties ?? {}).sort()).toEqual(['idempotency-key', 'resubmit-count', 'resubmitted-from', 'tenant']);
  });

  it('keeps body bytes, content type, subject, correlation id and properties, drops DeadLetter*, adds provenance', () => {
    const { copy } = planResubmit(original(), { ...options, dedupKey: 'm-1' });
    expect(Buffer.from(copy.body as Buffer).toString()).toBe('{"orderId":"o-1"}');
    expect(copy).toMatchObject({ contentType: 'application/json', subject: 'PaymentReceived', correlationId: 'c-1' });
    expect(copy.applicationProperties).toEqual({
      tenant: 't1',
      'resubmitted-from': 'orders/$DeadLetterQueue#42',
      'resubmit-count': 1,
      'idempotency-key': 'm-1',
    });
  });

  it('gives a new MessageId, carrying the dedup key, on a queue that detects duplicates, inside the window or after it', () => {
    expect(planResubmit(original(), { ...options, dedupKey: 'm-1' })).toMatchObject({ messageIdDecision: 'new', copy: { messageId: 'm-1~resubmit-1-n0' } });
    // After the window too: another message may have been sent under the same MessageId since.
    const old = original({ enqueuedTimeUtc: new Date(now - 700_000) });
    expect(planResubmit(old, { ...options, dedupKey: 'm-1' })).toMatchObject({
      messageIdDecision: 'new',
      copy: { messageId: 'm-1~resubmit-1-n0', applicationProperties: { 'idempotency-key': 'm-1' } },
    });
  });

  it('keeps the MessageId, with no idempotency-key added, on a queue without duplicate detection', () => {
    const old = original({ enqueuedTimeUtc: new Date(now - 700_000) });
    expect(planResubmit(old, { ...options, duplicateDetectionWindowMs: 0 })).toMatchObject({ messageIdDecision: 'kept', copy: { messageId: 'm-1' } });
    expect(planResubmit(original(), { ...options, duplicateDetectionWindowMs: 0 }).copy.messageId).toBe('m-1');
    expect(planResubmit(old, { ...options, duplicateDetectionWindowMs: 0 }).copy.applicationProperties).not.toHaveProperty('idempotency-key');
  });

  it('draws an unguessable part for each copy when none is given: 12 hex digits, never the same twice here', () => {
    const { nonce: _given, ...drawn } = options;
    const ids = Array.from({ length: 50 }, () => String(planResubmit(original(), { ...drawn, dedupKey: 'm-1' }).copy.messageId));
    for (const id of ids) expect(id).toMatch(/^m-1~resubmit-1-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(50);
    expect(copyNonce()).toMatch(/^[0-9a-f]{12}$/);
  });

  it('keeps a new MessageId for an original of 121 to 128 characters within the 128 characters Service Bus allows', () => {
    for (const length of [121, 128]) {
      const { copy } = planResubmit(original({ messageId: 'r'.repeat(length) }), { ...options, dedupKey: 'k' });
      expect(String(copy.messageId).length).toBeLessThanOrEqual(128);
      expect(planResubmit(original({ messageId: 'r'.repeat(length) }), { ...options, dedupKey: 'k' }).copy.messageId).toBe(copy.messageId);
    }
  });

  it('counts resubmits, so a copy resubmitted again gets its own id', () => {
    const again = original({ messageId: 'm-1~resubmit-1', applicationProperties: { 'resubmit-count': 1, 'idempotency-key': 'm-1' } });
    const { copy } = planResubmit(again, { ...options, dedupKey: 'm-1' });
    expect(copy.messageId).toBe('m-1~resubmit-1~resubmit-2-n0');
    expect(copy.applicationProperties).toMatchObject({ 'resubmit-count': 2, 'idempotency-key': 'm-1' });
  });

  it("carries the lineage's first send and caps the copy's time-to-live when the retention check found it safe", () => {
    const horizon = { kind: 'safe' as const, firstEnqueuedAtEpochMs: Date.parse('2026-11-01T00:00:00Z'), copyTimeToLiveMs: 5_000, checked: '' };
    const carried = { ...original().applicationProperties, 'First-Enqueued-At': '2026-11-20T00:00:00.000Z' };
    const { copy } = planResubmit(original({ applicationProperties: carried }), { ...options, dedupKey: 'm-1', horizon });
    expect(copy.timeToLive).toBe(5_000);
    expect(copy.applicationProperties).toMatchObject({ 'first-enqueued-at': '2026-11-01T00:00:00.000Z' });
    expect(copy.applicationProperties).not.toHaveProperty('First-Enqueued-At');
    expect(copy.applicationProperties).not.toHaveProperty('resubmit-forced-reason');
  });

  it('records why a forced copy was sent, with no time-to-live of its own', () => {
    const horizon = { kind: 'forced' as const, firstEnqueuedAtEpochMs: Date.parse('2026-11-01T00:00:00Z'), reason: 'checked by hand', checked: '' };
    const { copy } = planResubmit(original(), { ...options, dedupKey: 'm-1', horizon });
    expect(copy.timeToLive).toBeUndefined();
    expect(copy.applicationProperties).toMatchObject({ 'first-enqueued-at': '2026-11-01T00:00:00.000Z', 'resubmit-forced-reason': 'checked by hand' });
    const unknownAge = planResubmit(original(), { ...options, dedupKey: 'm-1', horizon: { ...horizon, firstEnqueuedAtEpochMs: undefined } }).copy;
    expect(unknownAge.applicationProperties).not.toHaveProperty('first-enqueued-at');
  });

  it("sends the data section's bytes as the SDK holds them (a section), not the value it parsed from them", () => {
    const text = `{"orderId":"o-1","lines":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    const deep = original({
      body: JSON.parse(text) as unknown,
      _rawAmqpMessage: { bodyType: 'data', body: { typecode: 117, content: Buffer.from(text) } },
    } as never);
    expect(Buffer.from(planResubmit(deep, options).copy.body as Buffer).toString()).toBe(text);
  });

  it('gives a new id when the broker shows no enqueued time too', () => {
    expect(planResubmit(original({ enqueuedTimeUtc: undefined }), { ...options, dedupKey: 'm-1' })).toMatchObject({
      messageIdDecision: 'new',
      copy: { messageId: 'm-1~resubmit-1-n0' },
    });
  });

  it("keeps the MessageId on a queue without duplicate detection even when the broker's enqueued time is ahead of this clock", () => {
    const ahead = original({ enqueuedTimeUtc: new Date(now + 5_000) });
    expect(planResubmit(ahead, { ...options, duplicateDetectionWindowMs: 0, dedupKey: 'm-1' })).toMatchObject({
      messageIdDecision: 'kept',
      copy: { messageId: 'm-1' },
    });
  });

  it('derives a new MessageId from the sequence number for an original without one, even after the window', () => {
    const anonymous = original({ messageId: undefined, enqueuedTimeUtc: new Date(now - 700_000) });
    const { copy, messageIdDecision } = planResubmit(anonymous, { ...options, dedupKey: 'k-1' });
    expect(messageIdDecision).toBe('new');
    expect(copy.messageId).toBe('seq-42~resubmit-1-n0');
    expect(copy.applicationProperties).toMatchObject({ 'idempotency-key': 'k-1' });
  });

  it('writes no idempotency-key when there is neither a dedup key nor an original MessageId', () => {
    const { copy } = planResubmit(original({ messageId: undefined }), options);
    expect(Object.keys(copy.applicationProperties ?? {})).not.toContain('idempotency-key');
  });

  it("carries the consumer's dedup key, not the original MessageId, when the two differ", () => {
    const { copy } = planResubmit(original(), { ...options, dedupKey: 'payment-7' });
    expect(copy.applicationProperties).toMatchObject({ 'idempotency-key': 'payment-7' });
  });

  it('leaves an idempotency key the sender set, whatever its case, as it was', () => {
    const sent = { tenant: 't1', 'Idempotency-Key': 'sender-key' };
    const { copy } = planResubmit(original({ applicationProperties: sent }), { ...options, dedupKey: 'payment-7' });
    expect(copy.applicationProperties).toEqual({
      tenant: 't1',
      'Idempotency-Key': 'sender-key',
      'resubmitted-from': 'orders/$DeadLetterQueue#42',
      'resubmit-count': 1,
    });
  });

  it("drops a sender's other spelling of the tool's own properties, so the consumer does not refuse the copy for two names that differ by case", () => {
    const sent = { tenant: 't1', 'Resubmit-Count': 3, 'RESUBMITTED-FROM': 'elsewhere', 'Resubmit-Forced-Reason': 'x' };
    const horizon = { kind: 'forced' as const, reason: 'INC-7', checked: '' };
    const { copy } = planResubmit(original({ applicationProperties: sent }), { ...options, dedupKey: 'm-1', horizon });
    const envelope = { messageId: String(copy.messageId), applicationProperties: copy.applicationProperties ?? {} };
    expect(() => refuseAmbiguousPropertyNames(envelope)).not.toThrow();
    expect(copy.applicationProperties).toMatchObject({
      'resubmit-count': 1,
      'resubmitted-from': 'orders/$DeadLetterQueue#42',
      'resubmit-forced-reason': 'INC-7',
    });
  });

  it('addresses the copy to the subscription it is for, and leaves it unaddressed otherwise', () => {
    expect(planResubmit(original(), { ...options, to: 'billing' }).copy.to).toBe('billing');
    expect(Object.keys(planResubmit(original(), options).copy)).not.toContain('to');
  });

  it("keeps the original's SessionId, and sets none for an original without one", () => {
    expect(planResubmit(original({ sessionId: 'order-9' }), options).copy.sessionId).toBe('order-9');
    expect(Object.keys(planResubmit(original(), options).copy)).not.toContain('sessionId');
  });

  it('sends the text of an AMQP value body that is a string as that text, not as a JSON string literal of it', () => {
    const text = '{"orderId":"o-2"}';
    const value = original({ body: text, _rawAmqpMessage: { bodyType: 'value', body: text } } as never);
    expect(asSentBySdk(planResubmit(value, options).copy.body).toString('utf8')).toBe(text);
  });

  it('sends a body that was not a data section as the SDK decoded it', () => {
    const value = original({ body: { orderId: 'o-2' }, _rawAmqpMessage: { bodyType: 'value', body: { orderId: 'o-2' } } } as never);
    expect(planResubmit(value, options).copy.body).toEqual({ orderId: 'o-2' });
  });
});
