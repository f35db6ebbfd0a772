import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { createOrdersContainer, documentsOf, testCosmosClient } from '../support/cosmosTestContainer.js';
import { keyRecordOf } from '../support/intakeHarness.js';
import { newOrderId } from '../support/orderMessages.js';
import { cosmosStore } from '../support/shipmentHarness.js';

// Bodies over a limit, however they are framed, through the local host as the Functions host
// serves them: the platform's limit (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT, here 100,000 bytes) before
// the function runs, the intake's own (INTAKE_MAX_BODY_BYTES, 65,536 by default) inside it.
const platformLimitBytes = 100_000;
let client: CosmosClient;
let container: Container;
let host: LocalFunctionsHost;
let baseUrl: string;
const invocations: string[] = [];

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  process.env.COSMOS_ORDERS_CONTAINER = container.id; // read by the function app as it loads
  await import('../../functions/submitOrder.js');
  const fn = [...registeredFunctions()].reverse().find((f) => f.metadata.name === 'submitOrder') as RegisteredFunction;
  host = startLocalFunctionsHost([fn], {
    settings: { FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: String(platformLimitBytes) },
    host: { maxConcurrentCalls: 1, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    http: { port: 0, onInvocation: (f) => invocations.push(f.metadata.name) },
  });
  const listener = await host.http;
  if (!listener) throw new Error('the host serves no HTTP');
  baseUrl = listener.url;
});

afterAll(async () => {
  await host.close();
  client.dispose();
});

interface Answer {
  readonly status: number;
  readonly contentType?: string;
  readonly body: string;
}

/**
 * POSTs `chunks` KiB in chunked transfer encoding (no Content-Length) unless headers say otherwise;
 * with `end: false` the body is never finished. Stops sending once the answer has come.
 */
function post(headers: OutgoingHttpHeaders, chunks: number, options: { end?: boolean; first?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const framing = headers['Content-Length'] === undefined ? { 'Transfer-Encoding': 'chunked' } : {};
    const req = request(new URL('api/orders', baseUrl), { method: 'POST', headers: { 'Content-Type': 'application/json', ...framing, ...headers } }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(parts).toString('utf8') });
      });
    });
    req.on('error', (error) => (answered ? undefined : reject(error)));
    const send = async () => {
      for (let i = 0; i < chunks && !answered; i += 1) {
        const chunk = i === 0 && options.first ? Buffer.from(options.first.padEnd(1024, ' ')) : Buffer.alloc(1024, 0x20);
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      if (options.end !== false && !answered) req.end();
    };
    send().catch(reject);
  });
}

const orderStart = (orderId: string) =>
  `{"orderId":"${orderId}","customerId":"c-42","currency":"EUR","lines":[{"sku":"SKU-1","quantity":1,"unitPrice":1}],"placedAt":"2026-11-30T08:00:00Z"}`;

describe('request bodies over a limit, through the local host', () => {
  it('answers a chunked body (no Content-Length) over INTAKE_MAX_BODY_BYTES with 413 body-too-large, writing nothing', async () => {
    const orderId = newOrderId();
    const key = randomUUID();
    const answer = await post({ 'Idempotency-Key': key }, 80, { first: orderStart(orderId) });
    expect([answer.status, answer.contentType]).toEqual([413, 'application/problem+json']);
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'urn:idempotent-order-consumer:problem:body-too-large' });
    expect(await keyRecordOf(cosmosStore(container), key)).toBeUndefined();
    expect(await documentsOf(container, orderId)).toEqual([]);
  });

  it('refuses a chunked body over FUNCTIONS_REQUEST_BODY_SIZE_LIMIT with 413 before the function runs, writing nothing', async () => {
    const orderId = newOrderId();
    const key = randomUUID();
    const before = invocations.length;
    const answer = await post({ 'Idempotency-Key': key }, 200, { first: orderStart(orderId) });
    expect(answer.status).toBe(413);
    expect(invocations.length).toBe(before);
    expect(await keyRecordOf(cosmosStore(container), key)).toBeUndefined();
    expect(await documentsOf(container, orderId)).toEqual([]);
  });

  it('refuses a declared Content-Length over the platform limit at once, without waiting for the body', { timeout: 10_000 }, async () => {
    const before = invocations.length;
    const answer = await post({ 'Idempotency-Key': randomUUID(), 'Content-Length': String(platformLimitBytes + 1) }, 1, { end: false });
    expect(answer.status).toBe(413);
    expect(invocations.length).toBe(before);
  });

  it('serves a body of the platform limit or less to the function', async () => {
    const answer = await post({ 'Idempotency-Key': randomUUID() }, 1, { first: orderStart(newOrderId()) });
    expect([answer.status, answer.body]).toEqual([202, expect.stringContaining('"status":"accepted"')]);
  });
});
