import { describe, expect, it } from 'vitest';
import { parseOrderMessage } from '../../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import { orderPlaced, orderStatusChanged, paymentReceived } from '../../support/orderMessages.js';
import { permanentFailureOf } from '../../support/permanentFailure.js';

// Each field's boundary where the message contract draws it: the last accepted value next to the
// first refused one, so that moving a bound either way fails a test.
const parse = (subject: string, body: unknown) =>
  parseOrderMessage(envelopeFromTriggerMetadata({ messageId: 'm-1', subject }), body, { maxMessageBytes: 262_144 });
const problems = (subject: string, body: unknown) => permanentFailureOf(() => parse(subject, body)).description;
const line = (overrides: Record<string, unknown>) => ({ sku: 'A', quantity: 1, unitPrice: 1, ...overrides });

describe('the order id', () => {
  it('is 1 to 128 characters', () => {
    expect(parse('OrderPlaced', orderPlaced('x'.repeat(128))).payload.orderId).toHaveLength(128);
    expect(problems('OrderPlaced', orderPlaced('x'.repeat(129)))).toContain('orderId:');
    expect(problems('OrderPlaced', orderPlaced(''))).toContain('orderId:');
  });

  it('holds none of the characters Cosmos ids forbid or derived ids reserve', () => {
    for (const bad of ['a/b', 'a\\b', 'a?b', 'a#b', 'a|b', 'a%b', 'a*b', 'a\u0001b', 'a\u007fb']) {
      expect(problems('OrderPlaced', orderPlaced(bad)), bad).toContain('orderId: must not contain / \\ ? # | % * or control characters');
    }
    expect(parse('OrderPlaced', orderPlaced('o-1.2_3:4 5é')).payload.orderId).toBe('o-1.2_3:4 5é');
  });

  it('does not start or end with white space, which would make two ids of one order', () => {
    for (const bad of [' o1', 'o1 ', '\u00a0o1'])
      expect(problems('PaymentReceived', paymentReceived(bad)), JSON.stringify(bad)).toContain('orderId: must not start or end with white space');
  });
});

describe('OrderPlaced', () => {
  it('takes a unit price of zero (a free line) and refuses a negative one', () => {
    expect(parse('OrderPlaced', orderPlaced('o', { lines: [line({ unitPrice: 0 })] })).payload).toMatchObject({ lines: [{ unitPrice: 0 }] });
    expect(problems('OrderPlaced', orderPlaced('o', { lines: [line({ unitPrice: -0.01 })] }))).toContain('lines[0].unitPrice: must be >= 0');
  });

  it('takes 1 to 100 lines, skus of 1 to 64 characters and customer ids of 1 to 128', () => {
    expect(
      parse('OrderPlaced', orderPlaced('o', { lines: Array.from({ length: 100 }, () => line({ sku: 'S'.repeat(64) })), customerId: 'c'.repeat(128) })).payload,
    ).toBeDefined();
    expect(problems('OrderPlaced', orderPlaced('o', { lines: [line({ sku: 'S'.repeat(65) })] }))).toContain('lines[0].sku:');
    expect(problems('OrderPlaced', orderPlaced('o', { lines: [line({ sku: '' })] }))).toContain('lines[0].sku:');
    expect(problems('OrderPlaced', orderPlaced('o', { customerId: 'c'.repeat(129) }))).toContain('customerId:');
    expect(problems('OrderPlaced', orderPlaced('o', { customerId: '' }))).toContain('customerId:');
  });

  it('takes a time with any UTC offset and refuses one without', () => {
    expect(parse('OrderPlaced', orderPlaced('o', { placedAt: '2026-11-30T08:00:00+02:00' })).payload).toMatchObject({ placedAt: '2026-11-30T08:00:00+02:00' });
    expect(parse('OrderPlaced', orderPlaced('o', { placedAt: '2026-11-30T08:00:00.123Z' })).payload).toBeDefined();
    expect(problems('OrderPlaced', orderPlaced('o', { placedAt: '2026-11-30T08:00:00' }))).toContain('placedAt:');
  });

  it('names each problem of each line by its path', () => {
    const text = problems('OrderPlaced', orderPlaced('o', { lines: [line({}), line({ quantity: 0 }), line({ quantity: 2.5, unitPrice: 'x' })] }));
    expect(text).toContain('lines[1].quantity:');
    expect(text).toContain('lines[2].quantity:');
    expect(text).toContain('lines[2].unitPrice:');
    expect(text).not.toContain('lines[0]');
  });
});

describe('PaymentReceived', () => {
  it('takes the smallest amount (0.0001) and refuses zero', () => {
    expect(parse('PaymentReceived', paymentReceived('o', { amount: 0.0001 })).payload).toMatchObject({ amount: 0.0001 });
    expect(problems('PaymentReceived', paymentReceived('o', { amount: 0 }))).toContain('amount: must be > 0');
  });

  it('takes payment ids of 1 to 128 characters and an ISO 4217 currency only', () => {
    expect(parse('PaymentReceived', paymentReceived('o', { paymentId: 'p'.repeat(128), currency: 'JPY' })).payload).toBeDefined();
    expect(problems('PaymentReceived', paymentReceived('o', { paymentId: 'p'.repeat(129) }))).toContain('paymentId:');
    expect(problems('PaymentReceived', paymentReceived('o', { paymentId: '' }))).toContain('paymentId:');
    expect(problems('PaymentReceived', paymentReceived('o', { currency: 'XYZ' }))).toContain('currency: must be an ISO 4217 currency code such as EUR');
  });
});

describe('OrderStatusChanged', () => {
  it('takes version 1 and every listed status, and refuses version 1.5', () => {
    for (const status of ['Accepted', 'Paid', 'Shipped', 'Delivered', 'Cancelled'])
      expect(parse('OrderStatusChanged', orderStatusChanged('o', 1, status)).payload).toMatchObject({ status, version: 1 });
    expect(problems('OrderStatusChanged', { ...orderStatusChanged('o', 1), version: 1.5 })).toContain('version:');
    expect(problems('OrderStatusChanged', { ...orderStatusChanged('o', 1), changedAt: 'now' })).toContain('changedAt:');
  });

  it('names a body that is not an object as a whole', () => {
    expect(problems('OrderStatusChanged', [1, 2])).toContain('(body):');
  });
});
