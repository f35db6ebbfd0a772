import { describe, expect, it } from 'vitest';
import { documentEvents, messageConcerns, messageEvent, orderIdOfBody, timeline, traceIdsOf } from '../../../src/cli/traceTimeline.js';

describe('messageConcerns', () => {
  const subject = { input: 'pay-1', orderId: 'o-1' };
  it("takes a message by its MessageId, a copy of it, its idempotency-key, its session or its body's order", () => {
    expect(messageConcerns({ messageId: 'pay-1' }, subject)).toBe(true);
    expect(messageConcerns({ messageId: 'pay-1~resubmit-2' }, subject)).toBe(true);
    expect(messageConcerns({ messageId: 'x', applicationProperties: { 'idempotency-key': 'pay-1' } }, subject)).toBe(true);
    expect(messageConcerns({ messageId: 'x', sessionId: 'o-1' }, subject)).toBe(true);
    expect(messageConcerns({ messageId: 'x', body: { orderId: 'o-1' } }, subject)).toBe(true);
  });
  it('leaves the rest, and a key that only starts like it', () => {
    expect(messageConcerns({ messageId: 'pay-10', body: { orderId: 'o-2' } }, subject)).toBe(false);
    expect(messageConcerns({ messageId: 'x', body: 'o-1' }, { input: 'pay-1' })).toBe(false);
  });
});

describe('orderIdOfBody', () => {
  it('reads only a top-level string orderId', () => {
    expect(orderIdOfBody({ orderId: 'o-1' })).toBe('o-1');
    expect(orderIdOfBody({ nested: { orderId: 'o-1' } })).toBeUndefined();
    expect(orderIdOfBody([{ orderId: 'o-1' }])).toBeUndefined();
    expect(orderIdOfBody(Uint8Array.from([1]))).toBeUndefined();
  });
});

describe('documentEvents', () => {
  it("gives a document's creation and the later instants it records", () => {
    const outbox = {
      id: 'outbox|OrderAccepted|o-1',
      docType: 'outbox',
      state: 'published',
      createdAt: '2026-12-03T08:00:00.000Z',
      publishedAt: '2026-12-03T08:00:02.000Z',
      eventType: 'OrderAccepted',
    };
    expect(documentEvents(outbox)).toEqual([
      { at: '2026-12-03T08:00:00.000Z', where: 'cosmos outbox', what: 'outbox written', id: outbox.id, detail: 'state published; eventType OrderAccepted' },
      { at: '2026-12-03T08:00:02.000Z', where: 'cosmos outbox', what: 'outbox published', id: outbox.id, detail: '' },
    ]);
  });
  it('gives when a parked item was rejected and when a resubmit claimed it', () => {
    const item = {
      id: 'parked|payment|pay-1',
      docType: 'parked',
      state: 'resubmitting',
      parkedAt: '2026-12-03T08:00:00.000Z',
      rejection: { reason: 'OrderNeverArrived', description: '', rejectedAt: '2026-12-03T09:00:00.000Z' },
      resubmitClaim: { claimedAt: '2026-12-03T10:00:00.000Z', run: 'r-1' },
    };
    expect(documentEvents(item).map((e) => [e.at, e.what])).toEqual([
      ['2026-12-03T08:00:00.000Z', 'parked written'],
      ['2026-12-03T09:00:00.000Z', 'parked rejected'],
      ['2026-12-03T10:00:00.000Z', 'parked claimed by a resubmit'],
    ]);
  });
  it('names an operator action by its command and targets', () => {
    expect(documentEvents({ id: 'a', docType: 'operator-action', at: '2026-12-03T08:00:00.000Z', command: 'purge', targets: ['7'] })[0]).toMatchObject({
      where: 'operator-action',
      what: 'operator ran purge',
      detail: 'command purge; targets 7',
    });
  });
});

describe('messageEvent', () => {
  it('dates a scheduled message at its scheduled time and says where a dead-lettered one is', () => {
    expect(
      messageEvent(
        { messageId: 'm', state: 'scheduled', enqueuedTimeUtc: new Date(0), scheduledEnqueueTimeUtc: new Date('2026-12-03T09:00:00Z') },
        'orders (live)',
      ),
    ).toMatchObject({ at: '2026-12-03T09:00:00.000Z', what: 'scheduled message' });
    expect(
      messageEvent({ messageId: 'm', deadLetterReason: 'X', deadLetterErrorDescription: 'y', enqueuedTimeUtc: new Date(0) }, 'orders/$deadletterqueue'),
    ).toMatchObject({ what: 'dead-lettered message', detail: 'X: y' });
  });
});

describe('traceIdsOf', () => {
  it('keeps the trace ids of well-formed traceparents, once each', () => {
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(traceIdsOf([tp, tp.toUpperCase(), 'garbage', 42, undefined])).toEqual(['4bf92f3577b34da6a3ce929d0e0e4736']);
  });
});

describe('timeline', () => {
  it('orders events by time', () => {
    const e = (at: string) => ({ at, where: 'w', what: 'x', id: at, detail: '' });
    expect(timeline([e('2026-12-03T09:00:00Z'), e('2026-12-03T08:00:00Z')]).map((x) => x.at)).toEqual(['2026-12-03T08:00:00Z', '2026-12-03T09:00:00Z']);
  });
});
