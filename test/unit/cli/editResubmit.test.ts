import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import { decideEdit } from '../../../src/cli/editResubmit.js';
import { refuseAmbiguousPropertyNames } from '../../../src/servicebus/index.js';

const payment = { orderId: 'o-1', paymentId: 'p-1', amount: 12, currency: 'USD', receivedAt: '2026-11-30T09:00:00Z' };
const original = (props: Record<string, unknown> = {}) =>
  ({
    messageId: 'pay-1',
    sequenceNumber: Long.fromNumber(7),
    subject: 'PaymentReceived',
    contentType: 'application/json',
    body: payment,
    applicationProperties: props,
  }) as unknown as ServiceBusReceivedMessage;
const notApplied = { kind: 'invalid' as const, detail: 'CurrencyMismatch: USD on a EUR order' };

describe('decideEdit', () => {
  it('sends the edited body under <key>~edit-1, recording the original key', () => {
    const decision = decideEdit(original(), { ...payment, currency: 'EUR' }, notApplied);
    expect(decision).toMatchObject({
      kind: 'send',
      copy: {
        messageId: 'pay-1~edit-1',
        subject: 'PaymentReceived',
        body: { currency: 'EUR' },
        applicationProperties: { 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1', 'edit-count': 1 },
      },
    });
  });
  it('numbers an edit of an edit from the first original', () => {
    const decision = decideEdit(original({ 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1', 'edit-count': 1 }), payment, {
      kind: 'not-processed',
      detail: '',
    });
    expect(decision).toMatchObject({ kind: 'send', copy: { messageId: 'pay-1~edit-2', applicationProperties: { 'edited-from': 'pay-1', 'edit-count': 2 } } });
  });
  it('edits a message whose key came in Idempotency-Key, replacing that spelling rather than adding a second one', () => {
    const decision = decideEdit(original({ 'Idempotency-Key': 'pay-key', 'Edited-From': 'x', 'EDIT-COUNT': 4 }), payment, notApplied);
    expect(decision).toMatchObject({ kind: 'send', copy: { messageId: 'pay-key~edit-1' } });
    if (decision.kind !== 'send') return;
    expect(decision.copy.applicationProperties).toEqual({ 'idempotency-key': 'pay-key~edit-1', 'edited-from': 'pay-key', 'edit-count': 1 });
    expect(() => refuseAmbiguousPropertyNames({ applicationProperties: decision.copy.applicationProperties ?? {} })).not.toThrow();
  });
  it("keys the edit by the original's own key when its edited-from does not lead to that key (a sender's claim, not an earlier edit)", () => {
    const forged = decideEdit(original({ 'edited-from': 'pay-9', 'edit-count': 3 }), payment, notApplied);
    expect(forged).toMatchObject({ kind: 'send', copy: { messageId: 'pay-1~edit-1', applicationProperties: { 'edited-from': 'pay-1', 'edit-count': 1 } } });
    const wrongCount = decideEdit(original({ 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1', 'edit-count': 5 }), payment, notApplied);
    expect(wrongCount).toMatchObject({ kind: 'send', copy: { messageId: 'pay-1~edit-1~edit-1' } });
  });
  it("writes the key without the consumer's prefix, which the consumer adds itself, and goes on from an edit the previous release prefixed", () => {
    const decision = decideEdit(original(), payment, notApplied, 'orders');
    expect(decision).toMatchObject({
      kind: 'send',
      copy: { messageId: 'pay-1~edit-1', applicationProperties: { 'idempotency-key': 'pay-1~edit-1', 'edited-from': 'pay-1' } },
    });
    const previousRelease = original({ 'idempotency-key': 'orders|pay-1~edit-1', 'edited-from': 'orders|pay-1', 'edit-count': 1 });
    expect(decideEdit(previousRelease, payment, notApplied, 'orders')).toMatchObject({ kind: 'send', copy: { messageId: 'orders|pay-1~edit-2' } });
  });
  it("refuses when the original's effect is there, saying what is applied", () => {
    expect(decideEdit(original(), payment, { kind: 'processed', detail: 'payment applied at 2026-12-03T08:00:00Z' })).toEqual({
      kind: 'refused',
      detail: expect.stringContaining("the original's key already has an effect (processed: payment applied at 2026-12-03T08:00:00Z)"),
    });
    expect(decideEdit(original(), payment, { kind: 'conflict', detail: 'key pay-1 was applied with a different payload' }).kind).toBe('refused');
  });
  it('refuses without a store to check, and an edited body the schema rejects, naming the field', () => {
    expect(decideEdit(original(), payment, { kind: 'unchecked', detail: '' })).toMatchObject({
      kind: 'refused',
      detail: expect.stringContaining('give --cosmos-endpoint'),
    });
    expect(decideEdit(original(), { ...payment, amount: 'twelve' }, notApplied)).toMatchObject({
      kind: 'refused',
      detail: expect.stringMatching(/the edited body is not a valid message: .*amount/),
    });
  });
});
