// The bare chain's store and broker work, written with @azure/cosmos and @azure/service-bus alone (no
// code of the app): the same documents the app writes, the same round trips its first deliveries make,
// and the same messages, so that what the app costs beyond them shows in `npm run bench -- --chain`.
// Nothing here decides duplicates, leases or conflicts: every order of the bench is new and sent once.
import { createHash } from 'node:crypto';
import type { Container, OperationInput } from '@azure/cosmos';
import type { ServiceBusMessage, ServiceBusSender } from '@azure/service-bus';

export interface BareChainContext {
  readonly container: Container;
  readonly ordersQueue: ServiceBusSender;
  readonly orderEvents: ServiceBusSender;
  readonly carrier: { readonly url: string; readonly apiKey: string };
}

export interface BareOrder {
  readonly orderId: string;
  readonly customerId: string;
  readonly currency: string;
  readonly lines: readonly { readonly sku: string; readonly quantity: number; readonly unitPrice: number }[];
  readonly placedAt: string;
}

const keyTtlSeconds = 86_400;
const publishedTtlSeconds = 604_800;
const source = '/bench/bare-chain';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const now = () => new Date().toISOString();
const creates = (...docs: object[]): OperationInput[] => docs.map((resourceBody) => ({ operationType: 'Create', resourceBody: resourceBody as never }));

/** A read that may miss, as the app's store adapter makes it (a 404 is an answer, not an error). */
async function read(container: Container, partitionKey: string, id: string): Promise<{ resource?: Record<string, unknown>; etag?: string }> {
  const { resource, etag } = await container.item(id, partitionKey).read<Record<string, unknown>>();
  return { resource, etag };
}

async function batch(container: Container, partitionKey: string, operations: OperationInput[]): Promise<string[]> {
  const response = await container.items.batch(operations, partitionKey);
  const failed = response.result?.find((r) => r.statusCode >= 400);
  if (failed || !response.result) throw new Error(`batch in ${partitionKey}: ${failed?.statusCode ?? response.code}`);
  return response.result.map((r) => r.eTag ?? '');
}

function outboxEntry(
  orderId: string,
  id: string,
  eventType: string,
  destination: string,
  body: unknown,
  messageId: string,
  createdAt: string,
  causationMessageId?: string,
) {
  const message = {
    messageId,
    subject: eventType,
    contentType: 'application/json',
    body,
    sessionId: orderId,
    applicationProperties: {
      'cloudEvents:specversion': '1.0',
      'cloudEvents:id': messageId,
      'cloudEvents:source': source,
      'cloudEvents:type': eventType,
      'cloudEvents:time': createdAt,
      'cloudEvents:subject': orderId,
    },
  };
  return {
    id,
    orderId,
    docType: 'outbox',
    eventType,
    destination,
    message,
    ...(causationMessageId ? { causationMessageId } : {}),
    createdAt,
    state: 'pending',
    publishedAt: null as string | null,
  };
}

/** What the app's publisher does for one entry: send, then mark it published under the batch's etag. */
async function publish(ctx: BareChainContext, sender: ServiceBusSender, entry: ReturnType<typeof outboxEntry>, etag: string): Promise<void> {
  await sender.sendMessages(entry.message as ServiceBusMessage);
  const marked = { ...entry, state: 'published', publishedAt: now(), ttl: publishedTtlSeconds };
  await ctx.container.item(entry.id, entry.orderId).replace(marked, { accessCondition: { type: 'IfMatch', condition: etag } });
}

/**
 * POST /api/orders: the key's record read and created, the order's claim and the order read, the
 * claim and the OrderPlaced entry in one batch, the key's record read and completed; answered, then
 * OrderPlaced sent and its entry marked (the app's publisher does that from the change feed).
 */
export async function bareIntake(
  ctx: BareChainContext,
  idempotencyKey: string,
  bodyText: string,
): Promise<{ status: number; body: unknown; publish: () => Promise<void> }> {
  const order = JSON.parse(bodyText) as BareOrder;
  const { orderId } = order;
  const keyId = `intake-key|${idempotencyKey}`;
  const fingerprint = sha256(bodyText);
  await read(ctx.container, keyId, keyId);
  const record = {
    id: keyId,
    orderId: keyId,
    docType: 'intake-key',
    idempotencyKey,
    fingerprint,
    requestOrderId: orderId,
    state: 'in-progress',
    owner: 'bare',
    attempt: 1,
    leaseExpiresAt: now(),
    createdAt: now(),
    ttl: keyTtlSeconds,
  };
  await ctx.container.items.create(record);
  await Promise.all([read(ctx.container, orderId, `intake|${orderId}`), read(ctx.container, orderId, orderId)]);
  const acceptedAt = now();
  const messageId = `${orderId}~${fingerprint.slice(0, 32)}`;
  const response = { status: 202, body: { orderId, messageId, acceptedAt } };
  const entry = outboxEntry(orderId, `outbox|OrderPlaced|${orderId}`, 'OrderPlaced', 'orders', order, messageId, acceptedAt);
  const claim = { id: `intake|${orderId}`, orderId, docType: 'intake', idempotencyKey, fingerprint, response, acceptedAt };
  const [, entryEtag] = await batch(ctx.container, orderId, creates(claim, entry));
  const current = await read(ctx.container, keyId, keyId);
  await ctx.container
    .item(keyId, keyId)
    .replace({ ...record, state: 'completed', response, completedAt: now() }, { accessCondition: { type: 'IfMatch', condition: current.etag ?? '' } });
  return { ...response, publish: () => publish(ctx, ctx.ordersQueue, entry, entryEtag ?? '') };
}

/** processOrder's first delivery: order, OrderAccepted entry and closed gate in one batch; then the entry published. */
export async function bareProcessOrder(ctx: BareChainContext, order: BareOrder, messageId: string): Promise<void> {
  const processedAt = now();
  const total = order.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
  const document = {
    id: order.orderId,
    ...order,
    docType: 'order',
    total,
    status: 'Accepted',
    statusVersion: 0,
    amountPaid: 0,
    paymentCount: 0,
    claimedPaymentCount: 0,
    messageId,
    dedupKey: messageId,
    fingerprint: sha256(JSON.stringify(order)),
    processedAt,
  };
  const event = { orderId: order.orderId, customerId: order.customerId, currency: order.currency, total, placedAt: order.placedAt };
  const entry = outboxEntry(
    order.orderId,
    `outbox|OrderAccepted|${order.orderId}`,
    'OrderAccepted',
    'order-events',
    event,
    `outbox|OrderAccepted|${order.orderId}`,
    processedAt,
    messageId,
  );
  const gate = {
    id: `parking-lot|${order.orderId}`,
    orderId: order.orderId,
    docType: 'parking-lot',
    state: 'closed',
    changedAt: processedAt,
    ttl: keyTtlSeconds,
  };
  const [, entryEtag] = await batch(ctx.container, order.orderId, creates(document, entry, gate));
  await publish(ctx, ctx.orderEvents, entry, entryEtag ?? '');
}

/**
 * requestShipment's first delivery: the record read (none), created in progress and read back; the
 * carrier called under the event's key; the order read; the record completed and the order given its
 * shipment id in one batch.
 */
export async function bareRequestShipment(
  ctx: BareChainContext,
  event: { orderId: string; customerId: string; currency: string; total: number },
  key: string,
): Promise<void> {
  const { orderId } = event;
  const recordId = `shipment|${key.replaceAll('|', '%7C').replaceAll('/', '%2F')}`;
  const request = { orderReference: orderId, customerId: event.customerId, declaredValue: event.total, currency: event.currency };
  await read(ctx.container, orderId, recordId);
  const startedAt = now();
  const record = {
    id: recordId,
    orderId,
    docType: 'shipment',
    idempotencyKey: key,
    request,
    requestFingerprint: sha256(JSON.stringify(request)),
    state: 'in-progress',
    owner: 'bare',
    attempt: 1,
    leaseExpiresAt: startedAt,
    reconcileAttempts: 0,
    startedAt,
    updatedAt: startedAt,
  };
  await ctx.container.items.create(record);
  const own = await read(ctx.container, orderId, recordId);
  const answer = await fetch(new URL('shipments', `${ctx.carrier.url}/`), {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${ctx.carrier.apiKey}`,
      'Idempotency-Key': JSON.stringify(key),
      'Content-Type': 'application/json',
      Accept: 'application/json',
    },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(10_000),
  });
  const booked = (await answer.json()) as { shipmentId?: string };
  if (answer.status !== 201 || !booked.shipmentId) throw new Error(`carrier answered ${answer.status}`);
  const order = await read(ctx.container, orderId, orderId);
  const bookedAt = now();
  await batch(ctx.container, orderId, [
    {
      operationType: 'Replace',
      id: recordId,
      resourceBody: {
        ...record,
        state: 'completed',
        shipmentId: booked.shipmentId,
        answer: { status: 201, body: booked, via: 'booking' },
        updatedAt: bookedAt,
      },
      ifMatch: own.etag,
    },
    {
      operationType: 'Replace',
      id: orderId,
      resourceBody: { ...order.resource, shipmentId: booked.shipmentId, shipmentBookedAt: bookedAt } as never,
      ifMatch: order.etag,
    },
  ]);
}
