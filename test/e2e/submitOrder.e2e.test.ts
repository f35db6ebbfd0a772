import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import type { InvocationResult } from '../../emulators/functions-host/hostInvocation.js';
import type { HttpListener } from '../../emulators/functions-host/httpTriggers.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { findOutcomeLine } from '../../dev/local/outcomeLine.js';
import { startLocalStack } from '../../dev/local/localStack.js';
import type { LocalStack } from '../../dev/local/localStack.js';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { idempotencyKeyHeader } from '../../src/http/idempotencyKeyHeader.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';
import { eventually } from '../support/waiting.js';

// The intake over HTTP through the whole chain: fetch -> the local host's HTTP listener (RpcHttp
// through the library's invocation model) -> submitOrder -> Cosmos (claim + outbox) -> change feed ->
// publishOutbox -> orders queue -> processOrder -> the order document.
let stack: LocalStack;
let host: LocalFunctionsHost;
let http: HttpListener;
let cosmos: CosmosClient;
let container: Container;
const deliveries: { fn: string; messageId?: string; outcome?: unknown; source?: unknown; diagnosticId?: unknown; orderId?: unknown }[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ wellKnownPorts: false });
  Object.assign(process.env, stack.settings);
  await import('../../functions/submitOrder.js');
  await import('../../functions/processOrder.js');
  await import('../../functions/publishOutbox.js');
  await import('../../functions/requestShipment.js');
  const functions = ['submitOrder', 'processOrder', 'publishOutbox', 'requestShipment'].map(
    (name) => [...registeredFunctions()].reverse().find((f) => f.metadata.name === name) as RegisteredFunction,
  );
  host = startLocalFunctionsHost(functions, {
    settings: stack.settings,
    host: { maxConcurrentCalls: 8, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    cosmos: { intervals: { feedPollDelayMs: 100, leaseAcquireIntervalMs: 200, leaseRenewIntervalMs: 300, leaseExpirationIntervalMs: 1500 } },
    http: { port: 0 },
    onInvocation: (fn, delivery, result: InvocationResult) => {
      const line = findOutcomeLine(result);
      const properties = delivery.applicationProperties ?? {};
      const record = {
        fn: fn.metadata.name,
        messageId: delivery.messageId,
        outcome: line?.outcome,
        source: properties['cloudEvents:source'],
        diagnosticId: properties['Diagnostic-Id'],
        orderId: line?.orderId,
      };
      deliveries.push(record);
    },
  });
  const listener = await host.http;
  if (!listener) throw new Error('the host serves no HTTP');
  http = listener;
  cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  container = cosmos.database(stack.settings.COSMOS_DATABASE ?? 'orders').container(stack.settings.COSMOS_ORDERS_CONTAINER ?? 'orders');
}, 60_000);

afterAll(async () => {
  await host?.close();
  cosmos.dispose();
  await stack.close();
});

function post(key: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL('api/orders', http.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': idempotencyKeyHeader(key) }), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A client that retries as the README tells it to: on 409 request-in-progress, after Retry-After, same key and body. */
async function postUntilAnswered(key: string, body: unknown): Promise<{ status: number; replayed: boolean; body: unknown; waits: number }> {
  for (let waits = 0; ; waits += 1) {
    const response = await post(key, body);
    const json: unknown = await response.json();
    if (response.status !== 409 || (json as { type?: string }).type?.endsWith('request-in-progress') !== true) {
      return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body: json, waits };
    }
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 1000));
  }
}

const orderDocument = async (orderId: string) => (await container.item(orderId, orderId).read<{ customerId: string; docType: string }>()).resource;

describe('submitOrder over HTTP, as Core Tools serves it', () => {
  it('is served on POST /api/orders only: another method or path is 404', async () => {
    expect(http.routes).toEqual([{ functionName: 'submitOrder', methods: ['POST'], route: '/api/orders', authLevel: 'function' }]);
    expect((await fetch(new URL('api/orders', http.url))).status).toBe(404);
    expect((await fetch(new URL('api/order', http.url), { method: 'POST' })).status).toBe(404);
  });

  it('accepts an order with 202 and the order is created from the published OrderPlaced, once, whatever the retries', async () => {
    const orderId = newOrderId();
    const key = randomUUID();
    const first = await post(key, orderPlaced(orderId));
    expect(first.status).toBe(202);
    expect(first.headers.get('content-type')).toBe('application/json');
    const body = (await first.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ orderId, status: 'accepted', messageId: expect.stringMatching(new RegExp(`^${orderId}~[0-9a-f]{32}$`)) });
    await eventually('the order document', async () => (await orderDocument(orderId)) !== undefined);
    const retry = await post(key, orderPlaced(orderId));
    expect([retry.status, retry.headers.get('idempotent-replayed')]).toEqual([202, 'true']);
    expect(await retry.json()).toEqual(body);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // a second event would arrive by now
    expect(deliveries.filter((d) => d.orderId === orderId && d.fn === 'processOrder')).toEqual([
      expect.objectContaining({ messageId: body.messageId, outcome: 'created', source: '/idempotent-order-consumer/intake' }),
    ]);
  });

  it('turns 50 concurrent identical requests into one order and one OrderPlaced; every client ends with the same 202', async () => {
    const orderId = newOrderId();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, () => postUntilAnswered(key, orderPlaced(orderId))));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([202]));
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    await eventually('the order document', async () => (await orderDocument(orderId)) !== undefined);
    const { resources: outbox } = await container.items
      .query({ query: "SELECT * FROM c WHERE c.docType = 'outbox' AND c.eventType = 'OrderPlaced'" }, { partitionKey: orderId })
      .fetchAll();
    expect(outbox).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(deliveries.filter((d) => d.orderId === orderId && d.fn === 'processOrder').map((d) => d.outcome)).toEqual(['created']);
  });

  it("keeps one trace from the request to the carrier: every hop carries the caller's trace id", async () => {
    const orderId = newOrderId();
    const traceId = randomUUID().replaceAll('-', '');
    const response = await post(randomUUID(), orderPlaced(orderId), { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(response.status).toBe(202);
    await eventually('the booking', () => stack.carrier.bookings().some((b) => b.orderReference === orderId), 30_000);
    // The carrier sees the booking before requestShipment returns, and the host records an invocation only once it returns.
    await eventually('the requestShipment invocation', () => deliveries.some((d) => d.fn === 'requestShipment' && d.orderId === orderId), 10_000);
    const traceOf = (value: unknown) => String(value).split('-')[1];
    const placed = deliveries.find((d) => d.fn === 'processOrder' && d.orderId === orderId);
    const accepted = deliveries.find((d) => d.fn === 'requestShipment' && d.orderId === orderId);
    const booking = stack.carrier.bookings().find((b) => b.orderReference === orderId);
    expect([traceOf(placed?.diagnosticId), traceOf(accepted?.diagnosticId), traceOf(booking?.traceparent)]).toEqual([traceId, traceId, traceId]);
    // Each hop is a child of the one before: the span ids differ.
    expect(new Set([placed?.diagnosticId, accepted?.diagnosticId, booking?.traceparent]).size).toBe(3);
  });

  it('takes the key bare, as Stripe-style clients send it, and quoted, as the draft writes it, as one key', async () => {
    const orderId = newOrderId();
    const key = randomUUID();
    const bare = await post(undefined, orderPlaced(orderId), { 'Idempotency-Key': key });
    expect(bare.status).toBe(202);
    const quoted = await post(key, orderPlaced(orderId));
    expect([quoted.status, quoted.headers.get('idempotent-replayed')]).toEqual([202, 'true']);
    expect(await quoted.json()).toEqual(await bare.json());
  });

  it('answers the HTTP contract with problem+json: 400, 409, 413, 415, 422', async () => {
    const orderId = newOrderId();
    const key = randomUUID();
    await post(key, orderPlaced(orderId));
    const cases: [Promise<Response>, number, string][] = [
      [post(undefined, orderPlaced(newOrderId())), 400, 'idempotency-key-missing'],
      [post(undefined, orderPlaced(newOrderId()), { 'Idempotency-Key': 'two, keys' }), 400, 'idempotency-key-malformed'],
      [post(randomUUID(), 'not json'), 400, 'body-not-json'],
      [post(randomUUID(), { orderId: newOrderId() }), 400, 'invalid-order'],
      [post(randomUUID(), orderPlaced(orderId)), 409, 'order-exists'],
      [post(randomUUID(), orderPlaced(newOrderId(), { customerId: 'x'.repeat(70_000) })), 413, 'body-too-large'],
      [post(randomUUID(), orderPlaced(newOrderId()), { 'Content-Type': 'text/plain' }), 415, 'unsupported-media-type'],
      [post(key, orderPlaced(orderId, { customerId: 'someone-else' })), 422, 'idempotency-key-reused'],
    ];
    for (const [request, status, type] of cases) {
      const response = await request;
      expect([response.status, response.headers.get('content-type')]).toEqual([status, 'application/problem+json']);
      expect(await response.json()).toMatchObject({ type: `urn:idempotent-order-consumer:problem:${type}`, status });
    }
  });
});
