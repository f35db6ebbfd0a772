import { describe, expect, it } from 'vitest';
import { fingerprintPayload } from '../../../src/idempotency/index.js';
import { problemTypeBase, readOrderRequest } from '../../../src/intake/index.js';
import type { IntakeResponse, OrderRequest } from '../../../src/intake/index.js';
import { orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';

const read = (request: ReturnType<typeof orderRequest>, max = 1024) => readOrderRequest(request, max);
const problemOf = (r: OrderRequest | IntakeResponse) => {
  if (!('status' in r)) throw new Error('the request was accepted');
  return { status: r.status, headers: r.headers, ...(r.body as { type: string; title: string; detail: string }) };
};
const withHeaders = (headers: Record<string, string>) => ({ ...orderRequest(undefined, orderPlaced('o-1')), headers: new Headers(headers) });

describe('readOrderRequest: each refusal, as a client sees it', () => {
  // RFC 9457: a problem type's title does not change from occurrence to occurrence, so clients may show it.
  it('gives each problem type its one title', async () => {
    const cases: [ReturnType<typeof orderRequest>, string, string][] = [
      [orderRequest(undefined, orderPlaced('o-1')), 'idempotency-key-missing', 'Idempotency-Key header required'],
      [withHeaders({ 'Content-Type': 'application/json', 'Idempotency-Key': 'a b' }), 'idempotency-key-malformed', 'Idempotency-Key header malformed'],
      [orderRequest('k'.repeat(256), orderPlaced('o-1')), 'idempotency-key-malformed', 'Idempotency-Key header too long'],
      [orderRequest('k', orderPlaced('o-1'), { 'Content-Type': 'text/plain' }), 'unsupported-media-type', 'Unsupported media type'],
      [orderRequest('k', 'x'.repeat(2000)), 'body-too-large', 'Body too large'],
      [orderRequest('k', '{'), 'body-not-json', 'Body is not JSON'],
      [orderRequest('k', { orderId: 'o-1' }), 'invalid-order', 'The order is not valid'],
    ];
    for (const [request, type, title] of cases) expect(problemOf(await read(request)), type).toMatchObject({ type: `${problemTypeBase}${type}`, title });
  });

  it('takes a key of white space for no key at all', async () => {
    expect(problemOf(await read(withHeaders({ 'Content-Type': 'application/json', 'Idempotency-Key': '   ' })))).toMatchObject({
      status: 400,
      detail: expect.stringContaining('send an Idempotency-Key header'),
    });
  });

  it('says how long the key is and how long it may be', async () => {
    expect(problemOf(await read(orderRequest('k'.repeat(256), orderPlaced('o-1')))).detail).toBe(
      'the Idempotency-Key is 256 characters; at most 255 are allowed',
    );
    expect(problemOf(await read(withHeaders({ 'Content-Type': 'application/json', 'Idempotency-Key': '"abc' }))).detail).toContain(
      'one non-empty sf-string (RFC 8941)',
    );
  });

  it('says which media type it got, or that there was none, and which it takes', async () => {
    const got = problemOf(await read(orderRequest('k', orderPlaced('o-1'), { 'Content-Type': 'text/plain' })));
    expect(got).toMatchObject({
      status: 415,
      headers: { Accept: 'application/json' },
      detail: 'send the order as application/json (UTF-8); the request has Content-Type text/plain',
    });
    const none = problemOf(await read(withHeaders({ 'Idempotency-Key': '"k"' })));
    expect(none.detail).toBe('send the order as application/json (UTF-8); the request has no Content-Type');
  });

  it('takes a charset only as utf-8, quoted or not, and never one with a quote inside', async () => {
    expect('order' in (await read(orderRequest('k', orderPlaced('o-1'), { 'Content-Type': 'application/json; charset="utf-8"' })))).toBe(true);
    expect('order' in (await read(orderRequest('k', orderPlaced('o-1'), { 'Content-Type': 'application/json;charset=UTF-8' })))).toBe(true);
    for (const contentType of ['application/json; charset=utf"-8', 'application/json; charset=utf-16', 'application/jsonx']) {
      expect(problemOf(await read(orderRequest('k', orderPlaced('o-1'), { 'Content-Type': contentType }))).status, contentType).toBe(415);
    }
  });

  it('says how large the body is and what the limit is', async () => {
    expect(problemOf(await read(orderRequest('k', 'x'.repeat(2000)))).detail).toBe(
      'the body is over 1024 bytes; an order may be at most 1024 bytes (INTAKE_MAX_BODY_BYTES)',
    );
    expect(problemOf(await read(orderRequest('k', orderPlaced('o-1'), { 'Content-Length': '1025' }))).detail).toBe(
      'the body is 1025 bytes; an order may be at most 1024 bytes (INTAKE_MAX_BODY_BYTES)',
    );
  });

  it("says why the body is not JSON, and lists the order's problems in the detail too", async () => {
    expect(problemOf(await read(orderRequest('k', '{'))).detail).toMatch(/^the body is not UTF-8 JSON: .+/);
    expect(problemOf(await read(orderRequest('k', { ...orderPlaced('o-1'), currency: 'XXX1' }))).detail).toBe(
      'currency: must be an ISO 4217 currency code such as EUR',
    );
  });

  it('fingerprints the order as the consumer fingerprints an OrderPlaced, so the two recognise one order', async () => {
    const accepted = await read(orderRequest('k', orderPlaced('o-1')));
    if (!('order' in accepted)) throw new Error('refused');
    expect(accepted.fingerprint).toBe(fingerprintPayload('OrderPlaced', orderPlaced('o-1')));
  });
});
