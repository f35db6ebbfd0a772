import { afterEach, describe, expect, it } from 'vitest';
import { isCosmosSafeId } from '../../src/cosmos/index.js';
import { PermanentMessageError, TransientStoreError } from '../../src/idempotency/index.js';
import { rejectedMessagesPartition, rejectionDocumentId } from '../../src/orders/index.js';
import { clearCosmosFaults, injectCosmosFault } from '../support/cosmosFaults.js';
import { documentsOf } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { BrokerMessage, deliver, outcomeLine, useProcessOrder } from '../support/processOrderHarness.js';
import type { Send } from '../support/processOrderHarness.js';

const app = useProcessOrder();
afterEach(() => clearCosmosFaults());

async function rejectionFor(messageId: string) {
  const { resource } = await app.container.item(rejectionDocumentId(messageId), rejectedMessagesPartition(messageId)).read();
  return resource as Record<string, unknown> | undefined;
}

describe('processOrder: permanent failures', () => {
  const orderId = 'o-permanent';
  const cases: [string, Send, string, RegExp][] = [
    ['a body that is not JSON', { body: '{"orderId": "o-permanent",', messageId: 'bad-json', subject: 'OrderPlaced' }, 'InvalidJson', /not JSON/],
    [
      'a schema violation, naming the field path',
      { body: orderPlaced(orderId, { lines: [{ sku: 'A', quantity: 0, unitPrice: 1 }] }), messageId: 'bad-schema', subject: 'OrderPlaced' },
      'SchemaViolation',
      /lines\[0\]\.quantity/,
    ],
    [
      'an unknown currency',
      { body: orderPlaced(orderId, { currency: 'EURO' }), messageId: 'bad-currency', subject: 'OrderPlaced' },
      'SchemaViolation',
      /currency: must be an ISO 4217/,
    ],
    [
      'an order id Cosmos cannot store',
      { body: orderPlaced('a/b'), messageId: 'bad-order-id', subject: 'OrderPlaced' },
      'SchemaViolation',
      /orderId: must not contain/,
    ],
    [
      'an unknown message type',
      { body: orderPlaced(orderId), messageId: 'bad-type', subject: 'OrderShredded' },
      'UnknownMessageType',
      /"OrderShredded" is not one of/,
    ],
    ['no type at all', { body: orderPlaced(orderId), messageId: 'no-type' }, 'UnknownMessageType', /no subject, CloudEvents type or type field/],
    [
      'an oversize body',
      { body: orderPlaced(orderId, { customerId: 'x'.repeat(300_000) }), messageId: 'too-big', subject: 'OrderPlaced' },
      'MessageTooLarge',
      /262144/,
    ],
  ];

  it.each(cases)('rejects %s with a clear reason, writes no order document and records why', async (_name, send, code, reason) => {
    const result = await deliver(app.fn, new BrokerMessage(send));
    expect(result.error).toBeInstanceOf(PermanentMessageError);
    expect((result.error as PermanentMessageError).code).toBe(code);
    expect((result.error as Error).message).toMatch(reason);
    expect(outcomeLine(result)).toMatchObject({ outcome: 'invalid', messageId: send.messageId });
    expect(result.logs.some((l) => l.level === 'error' && l.message.includes('"outcome":"invalid"'))).toBe(true);
    expect(await documentsOf(app.container, orderId)).toEqual([]);
    expect(await rejectionFor(send.messageId!)).toMatchObject({ reason: code, messageId: send.messageId, description: expect.stringMatching(reason) });
  });

  it('rejects a message with no usable key and never processes it keyless', async () => {
    const keyless = newOrderId();
    const result = await deliver(app.fn, new BrokerMessage({ body: orderPlaced(keyless), subject: 'OrderPlaced' }));
    expect((result.error as PermanentMessageError).code).toBe('NoDedupKey');
    expect(await documentsOf(app.container, keyless)).toEqual([]);
  });

  it('answers each further delivery of a rejected message from its record, and a resubmitted copy afresh', async () => {
    const message = new BrokerMessage({ body: 'not json', messageId: 'poison-1', subject: 'OrderPlaced' });
    await deliver(app.fn, message);
    const again = await deliver(app.fn, message);
    expect((again.error as PermanentMessageError).code).toBe('InvalidJson');
    expect(await rejectionFor('poison-1')).toMatchObject({ sequenceNumber: message.sequenceNumber });

    const resubmitted = new BrokerMessage({ body: 'still not json', messageId: 'poison-1', subject: 'OrderPlaced' });
    await deliver(app.fn, resubmitted);
    expect(await rejectionFor('poison-1')).toMatchObject({
      sequenceNumber: resubmitted.sequenceNumber,
      description: expect.stringContaining('still not json'),
    });
  });
});

describe('processOrder: transient store failures', () => {
  it.each([408, 429, 449, 500, 503])('throws on Cosmos %i so Service Bus redelivers, leaving no partial write', async (statusCode) => {
    const orderId = newOrderId();
    const message = new BrokerMessage({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' });
    await injectCosmosFault({ statusCode, times: 1000, urlIncludes: app.container.id, batchOnly: true });
    const failed = await deliver(app.fn, message);
    expect(failed.error).toBeInstanceOf(TransientStoreError);
    expect(outcomeLine(failed).outcome).toBe('retry');
    await clearCosmosFaults();
    expect(await documentsOf(app.container, orderId)).toEqual([]);

    const redelivered = await deliver(app.fn, message);
    expect(outcomeLine(redelivered).outcome).toBe('created');
    expect(await documentsOf(app.container, orderId)).toHaveLength(3);
  });

  it('throws when the order cannot even be read (503 on the point read of a payment)', async () => {
    const orderId = newOrderId();
    await deliver(app.fn, new BrokerMessage({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' }));
    await injectCosmosFault({ statusCode: 503, times: 1000, urlIncludes: `${app.container.id}/docs/${orderId}`, method: 'GET' });
    const result = await deliver(app.fn, new BrokerMessage({ body: paymentReceived(orderId), messageId: `p-${orderId}`, subject: 'PaymentReceived' }));
    expect(result.error).toBeInstanceOf(TransientStoreError);
    expect((result.error as TransientStoreError).statusCode).toBe(503);
  });
});

describe('processOrder: awkward dedup keys', () => {
  const keys: [string, string][] = [
    ['slashes', 'tenant/a/orders/1'],
    ['a hash and a question mark', 'order#1?retry=2'],
    ['a backslash and our own separators', 'a\\b|c%d*e'],
    ['unicode', 'zahlung-über-€-🚀-注文'],
    ['300 characters', 'k'.repeat(300)],
  ];

  it.each(keys)('stores a payment keyed with %s under a valid id, and recognises its redelivery', async (_name, key) => {
    const orderId = newOrderId();
    await deliver(app.fn, new BrokerMessage({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' }));
    const message = new BrokerMessage({
      body: paymentReceived(orderId),
      messageId: 'ignored',
      subject: 'PaymentReceived',
      applicationProperties: { 'idempotency-key': key },
    });
    expect(outcomeLine(await deliver(app.fn, message))).toMatchObject({ outcome: 'created', dedupKey: key });
    expect(outcomeLine(await deliver(app.fn, message)).outcome).toBe('duplicate');
    const marker = (await documentsOf(app.container, orderId)).find((d) => d.docType === 'inbox');
    expect(marker?.dedupKey).toBe(key);
    expect(isCosmosSafeId(String(marker?.id))).toBe(true);
  });
});

describe('processOrder: CloudEvents', () => {
  it('keys a structured CloudEvent by source and id and takes its type from the event', async () => {
    const orderId = newOrderId();
    const event = { specversion: '1.0', id: 'evt-1', source: '/shop/orders', type: 'com.example.shop.OrderPlaced', data: orderPlaced(orderId) };
    const send = { body: event, messageId: 'transport-id-1', contentType: 'application/cloudevents+json; charset=utf-8' };
    expect(outcomeLine(await deliver(app.fn, new BrokerMessage(send)))).toMatchObject({
      outcome: 'created',
      dedupKey: '/shop/orders|evt-1',
      type: 'OrderPlaced',
    });
    // A producer retry re-sends the event under a new MessageId: still the same event.
    expect(outcomeLine(await deliver(app.fn, new BrokerMessage({ ...send, messageId: 'transport-id-2' }))).outcome).toBe('duplicate');
  });

  it('keys a binary-mode CloudEvent by its cloudEvents: application properties', async () => {
    const orderId = newOrderId();
    const send = {
      body: orderPlaced(orderId),
      messageId: 'transport-id-3',
      applicationProperties: {
        'cloudEvents:specversion': '1.0',
        'cloudEvents:id': 'evt-9',
        'cloudEvents:source': 'urn:shop',
        'cloudEvents:type': 'shop.OrderPlaced',
      },
    };
    expect(outcomeLine(await deliver(app.fn, new BrokerMessage(send)))).toMatchObject({ outcome: 'created', dedupKey: 'urn:shop|evt-9', type: 'OrderPlaced' });
  });
});
