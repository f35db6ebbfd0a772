import { SpanKind, SpanStatusCode, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CarrierUnavailableError, HttpCarrierClient } from '../../../src/shipments/index.js';

/** The client's clock: a Retry-After date is measured from it, never from the machine's. */
const testNow = (): Date => new Date('2026-12-01T10:00:00Z');

// Pure logic: how the client reads each answer. A fetch that answers as told (the wire itself is
// covered by emulators/carrier-emulator/test/carrier.contract.test.ts against the stand-in).
function clientAnswering(
  status: number,
  body: string,
  headers: Record<string, string> = {},
  seen: { url?: string; init?: RequestInit }[] = [],
): HttpCarrierClient {
  const fetchStub = (async (url: URL | string, init?: RequestInit) => {
    seen.push({ url: String(url), init });
    return new Response(body, { status, headers });
  }) as typeof fetch;
  return new HttpCarrierClient({ baseUrl: 'https://carrier.example/v1', apiKey: 'k', timeoutMs: 1000, now: testNow, fetch: fetchStub });
}

const request = {
  idempotencyKey: 'a|"b"',
  shipment: { orderReference: 'o-1', customerId: 'c', declaredValue: 1, currency: 'EUR' },
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
};

async function unavailable(run: () => Promise<unknown>): Promise<CarrierUnavailableError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CarrierUnavailableError);
  return error as CarrierUnavailableError;
}

describe('HttpCarrierClient', () => {
  it('posts under the base path with the key as an sf-string, the trace context and the credential', async () => {
    const seen: { url?: string; init?: RequestInit }[] = [];
    expect(await clientAnswering(201, '{"shipmentId":"SHP-1"}', {}, seen).book(request)).toMatchObject({
      kind: 'booked',
      shipmentId: 'SHP-1',
      answer: { status: 201 },
    });
    expect(seen[0]?.url).toBe('https://carrier.example/v1/shipments');
    expect(seen[0]?.init?.headers).toEqual({
      Accept: 'application/json',
      'Idempotency-Key': '"a|\\"b\\""',
      traceparent: request.traceparent,
      Authorization: 'Bearer k',
      'Content-Type': 'application/json',
    });
    expect(JSON.parse(String(seen[0]?.init?.body))).toEqual(request.shipment);
  });

  it('reads a 4xx the carrier means as a refusal with its title, and the ones that settle nothing as unavailable', async () => {
    expect(await clientAnswering(422, '{"title":"parcel too heavy"}').book(request)).toEqual({
      kind: 'refused',
      answer: { status: 422, body: { title: 'parcel too heavy' } },
      reason: 'the carrier answered 422: parcel too heavy',
    });
    for (const status of [401, 403, 408, 409, 425, 429, 500, 503]) {
      expect((await unavailable(() => clientAnswering(status, '').book(request))).status).toBe(status);
    }
    expect((await unavailable(() => clientAnswering(429, '', { 'Retry-After': '3' }).book(request))).retryAfterMs).toBe(3000);
    // An HTTP date is measured from the injected clock (10:00:00), not the machine's.
    expect((await unavailable(() => clientAnswering(503, '', { 'Retry-After': 'Tue, 01 Dec 2026 10:00:45 GMT' }).book(request))).retryAfterMs).toBe(45_000);
  });

  it('an answer that claims success without a shipment id settles nothing', async () => {
    expect((await unavailable(() => clientAnswering(201, '{"status":"booked"}').book(request))).message).toContain('without a shipmentId');
    expect((await unavailable(() => clientAnswering(200, 'not json').book(request))).message).toContain('without a shipmentId');
  });

  it('reads a look-up: the stored answer, 404 as never booked, 409 as in flight, and a malformed answer as unavailable', async () => {
    const seen: { url?: string }[] = [];
    expect(await clientAnswering(200, '{"status":201,"body":{"shipmentId":"SHP-2"}}', {}, seen).lookup('a|b c')).toMatchObject({
      kind: 'booked',
      shipmentId: 'SHP-2',
    });
    expect(seen[0]?.url).toBe('https://carrier.example/v1/shipments?idempotencyKey=a%7Cb%20c');
    expect(await clientAnswering(200, '{"status":400,"body":{"title":"no"}}').lookup('k')).toMatchObject({
      kind: 'refused',
      reason: 'the carrier answered 400: no',
    });
    expect(await clientAnswering(404, '').lookup('k')).toEqual({ kind: 'not-found' });
    expect(await clientAnswering(409, '').lookup('k')).toEqual({ kind: 'in-flight' });
    expect((await unavailable(() => clientAnswering(200, '{"body":{}}').lookup('k'))).message).toContain('without the stored status');
    expect((await unavailable(() => clientAnswering(503, '').lookup('k'))).status).toBe(503);
  });

  it('reads a stored answer that settles nothing (5xx, 408, 409, 425, 429, 401, 403: a carrier that keeps its errors under the key) as no answer, not a refusal', async () => {
    for (const status of [500, 502, 503, 408, 409, 425, 429, 401, 403]) {
      const error = await unavailable(() => clientAnswering(200, JSON.stringify({ status, body: { title: 'try later' } })).lookup('k'));
      expect(error.status).toBe(status);
      expect(error.message).toBe(`the carrier keeps a ${status} answer under this key: nothing booked, and no answer yet: try later`);
    }
    expect(await clientAnswering(200, '{"status":422,"body":{"title":"no"}}').lookup('k')).toMatchObject({
      kind: 'refused',
      reason: 'the carrier answered 422: no',
    });
  });

  it('a timeout or a failed connection is unavailable, its outcome unknown', async () => {
    const timingOut = new HttpCarrierClient({
      baseUrl: 'https://carrier.example/',
      timeoutMs: 1000,
      now: testNow,
      fetch: (async () => Promise.reject(Object.assign(new Error('aborted'), { name: 'TimeoutError' }))) as typeof fetch,
    });
    expect((await unavailable(() => timingOut.book(request))).message).toBe('POST /shipments: no answer within 1000 ms');
    const refusing = new HttpCarrierClient({
      baseUrl: 'https://carrier.example/',
      timeoutMs: 1000,
      now: testNow,
      fetch: (async () => Promise.reject(new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }))) as typeof fetch,
    });
    const failed = await unavailable(() => refusing.book(request));
    expect(failed.message).toBe('POST /shipments: the connection failed (fetch failed: ECONNREFUSED)');
    expect(failed.cause).toBeInstanceOf(TypeError);
    const hungUp = new HttpCarrierClient({
      baseUrl: 'https://carrier.example/',
      timeoutMs: 1000,
      now: testNow,
      fetch: (() => Promise.reject('socket hang up')) as typeof fetch,
    });
    expect((await unavailable(() => hungUp.lookup('k'))).message).toBe('GET /shipments: the connection failed (socket hang up)');
  });

  it('sends no credential and no trace context when it has none', async () => {
    const seen: { init?: RequestInit }[] = [];
    const anonymous = new HttpCarrierClient({
      baseUrl: 'https://carrier.example/v1/',
      timeoutMs: 1000,
      now: testNow,
      fetch: (async (_url: URL | string, init?: RequestInit) => (seen.push({ init }), new Response('', { status: 404 }))) as typeof fetch,
    });
    await anonymous.lookup('k');
    expect(seen[0]?.init?.headers).toEqual({ Accept: 'application/json' });
  });

  it('reads an answer body as JSON, else as text cut at 2000 characters, and an empty or unreadable one as none', async () => {
    expect(await clientAnswering(422, '').book(request)).toEqual({
      kind: 'refused',
      answer: { status: 422, body: undefined },
      reason: 'the carrier answered 422',
    });
    expect(await clientAnswering(422, 'parcel too heavy').book(request)).toMatchObject({ answer: { status: 422, body: 'parcel too heavy' } });
    const long = await clientAnswering(422, 'x'.repeat(3000)).book(request);
    expect(long.kind === 'refused' && long.answer.body).toBe('x'.repeat(2000));
    expect(await clientAnswering(422, '{"title":5}').book(request)).toMatchObject({ reason: 'the carrier answered 422' });
    const broken = new ReadableStream({ start: (controller) => controller.error(new Error('connection reset')) });
    const unreadable = new HttpCarrierClient({
      baseUrl: 'https://carrier.example/',
      timeoutMs: 1000,
      now: testNow,
      fetch: (async () => new Response(broken, { status: 422 })) as typeof fetch,
    });
    expect(await unreadable.book(request)).toEqual({ kind: 'refused', answer: { status: 422, body: undefined }, reason: 'the carrier answered 422' });
  });

  it('takes only a 2xx with a non-empty shipment id as booked: a 300 is an answer, an empty id or body settles nothing', async () => {
    expect(await clientAnswering(300, '{"shipmentId":"SHP-3"}').book(request)).toMatchObject({ kind: 'refused', reason: 'the carrier answered 300' });
    expect(await clientAnswering(299, '{"shipmentId":"SHP-4"}').book(request)).toMatchObject({ kind: 'booked', shipmentId: 'SHP-4' });
    expect((await unavailable(() => clientAnswering(201, '{"shipmentId":""}').book(request))).message).toBe('the carrier answered 201 without a shipmentId');
    expect((await unavailable(() => clientAnswering(201, '').book(request))).message).toBe('the carrier answered 201 without a shipmentId');
    expect((await unavailable(() => clientAnswering(200, '').lookup('k'))).message).toBe("the carrier's look-up answered 200 without the stored status");
  });
});

describe('HttpCarrierClient, hardened', () => {
  const answering = (response: () => Response, seen: RequestInit[] = []) =>
    new HttpCarrierClient({
      baseUrl: 'https://carrier.example/v1/',
      timeoutMs: 1000,
      now: testNow,
      fetch: (async (_url: URL | string, init?: RequestInit) => (seen.push(init ?? {}), response())) as typeof fetch,
    });

  it('accepts only an https base URL, or plain http to a loopback address, and names the URL it refuses', () => {
    const build = (baseUrl: string) => () => new HttpCarrierClient({ baseUrl, timeoutMs: 1000, now: testNow });
    for (const url of [
      'http://carrier.example/v1/',
      'http://10.0.0.7:7080/',
      'http://127.0.0.1.carrier.example/',
      'http://localhost.carrier.example/',
      'ftp://carrier.example/',
    ]) {
      expect(build(url), url).toThrow(`the carrier base URL ${url} must be https:// (plain http:// only to a loopback address: 127.0.0.0/8, ::1, localhost)`);
    }
    for (const url of ['https://carrier.example/v1/', 'http://127.0.0.1:7080/', 'http://127.255.0.9/', 'http://localhost:7080/', 'http://[::1]:7080/'])
      expect(build(url), url).not.toThrow();
  });

  it('refuses a redirect, naming its Location, and follows none', async () => {
    const seen: RequestInit[] = [];
    const redirecting = answering(() => new Response(null, { status: 307, headers: { Location: 'https://elsewhere.example/shipments' } }), seen);
    const error = await unavailable(() => redirecting.book(request));
    expect(error.message).toBe(
      'POST /v1/shipments: the carrier redirected to https://elsewhere.example/shipments, and redirects are refused (check CARRIER_API_URL)',
    );
    expect(error.status).toBe(307);
    expect(seen[0]?.redirect).toBe('manual');
    expect(
      (await unavailable(() => answering(() => new Response(null, { status: 301, headers: { Location: '/v2/shipments' } })).lookup('k'))).message,
    ).toContain('redirected to /v2/shipments');
  });

  it('reads an answer of up to 64 KiB; a longer one is an error, and is not read to its end', async () => {
    const exactly = JSON.stringify({ title: 'x'.repeat(64 * 1024 - 12) });
    expect(exactly).toHaveLength(64 * 1024);
    expect(await answering(() => new Response(exactly, { status: 422 })).book(request)).toMatchObject({ kind: 'refused' });
    const longer = await unavailable(() => answering(() => new Response(`${exactly} `, { status: 201 })).book(request));
    expect(longer.message).toBe("POST /v1/shipments: the carrier's answer (201) is longer than 65536 bytes");
    // A body without an end: reading stops at the bound.
    let pulled = 0;
    const endless = () =>
      new Response(new ReadableStream({ pull: (controller) => void ((pulled += 1), controller.enqueue(new Uint8Array(16 * 1024))) }), { status: 200 });
    expect((await unavailable(() => answering(endless).lookup('k'))).message).toBe("GET /v1/shipments: the carrier's answer (200) is longer than 65536 bytes");
    expect(pulled).toBeLessThan(10);
  });
});

describe('HttpCarrierClient, traced', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    trace.disable();
    propagation.disable();
  });

  it("records each call as a client span under the caller's trace, and sends that span as the traceparent", async () => {
    const seen: { url?: string; init?: RequestInit }[] = [];
    await clientAnswering(201, '{"shipmentId":"SHP-1"}', {}, seen).book(request);
    await clientAnswering(503, '')
      .lookup('k')
      .catch(() => undefined);
    const [booking, lookup] = exporter.getFinishedSpans();
    expect(booking).toMatchObject({ name: 'POST /v1/shipments', kind: SpanKind.CLIENT, status: { code: SpanStatusCode.OK } });
    expect(booking?.attributes).toEqual({
      'http.request.method': 'POST',
      'url.full': 'https://carrier.example/v1/shipments',
      'server.address': 'carrier.example',
      'http.response.status_code': 201,
    });
    expect(booking?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect((seen[0]?.init?.headers as Record<string, string>).traceparent).toBe(`00-0af7651916cd43dd8448eb211c80319c-${booking?.spanContext().spanId}-01`);
    expect(lookup).toMatchObject({ name: 'GET /v1/shipments', status: { code: SpanStatusCode.ERROR } });
    expect(lookup?.attributes).toMatchObject({ 'url.full': 'https://carrier.example/v1/shipments', 'http.response.status_code': 503 });
  });
});
