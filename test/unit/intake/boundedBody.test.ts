import { describe, expect, it } from 'vitest';
import { readOrderRequest } from '../../../src/intake/index.js';
import type { IntakeHttpRequest } from '../../../src/intake/index.js';
import { orderPlaced } from '../../support/orderMessages.js';

// The body's size is known only by reading it: a chunked request declares none, and a declared
// Content-Length is the sender's word. The intake reads at most its limit, and not a chunk more.
const chunkBytes = 1024;

/** A body sent in chunks with no Content-Length, far larger than any order; counts what was pulled. */
function chunkedBody(totalChunks: number, firstBytes: Uint8Array = new Uint8Array(0)) {
  const pulled = { chunks: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled.chunks === totalChunks) return controller.close();
        controller.enqueue(pulled.chunks === 0 && firstBytes.length > 0 ? firstBytes : new Uint8Array(chunkBytes).fill(0x20));
        pulled.chunks += 1;
      },
      cancel() {
        pulled.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled };
}

/** The request as functions/submitOrder hands it over; `readBody` drains the stream, as the whole-body read did. */
function request(body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): IntakeHttpRequest {
  const whole = async () => new Uint8Array(await new Response(body).arrayBuffer());
  const value = { headers: new Headers({ 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1', ...headers }), body, readBody: whole };
  return value;
}

describe('readOrderRequest: the body read with a bound', () => {
  it('answers 413 for a chunked body over the limit having read no more than the limit and one chunk, and stops the sender', async () => {
    const { body, pulled } = chunkedBody(8192); // 8 MiB
    const response = await readOrderRequest(request(body), 4096);
    expect(response).toMatchObject({
      status: 413,
      body: {
        type: 'urn:idempotent-order-consumer:problem:body-too-large',
        detail: 'the body is over 4096 bytes; an order may be at most 4096 bytes (INTAKE_MAX_BODY_BYTES)',
      },
    });
    expect(pulled.chunks).toBeLessThanOrEqual(4096 / chunkBytes + 1);
    expect(pulled.cancelled).toBe(true);
  });

  it('does not take a small Content-Length at its word: the bytes are counted', async () => {
    const { body, pulled } = chunkedBody(64);
    const response = await readOrderRequest(request(body, { 'Content-Length': '10' }), 4096);
    expect(response).toMatchObject({ status: 413 });
    expect(pulled.chunks).toBeLessThanOrEqual(5);
  });

  it('reads a body of exactly the limit, in however many chunks it comes', async () => {
    const text = new TextEncoder().encode(JSON.stringify(orderPlaced('o-1')));
    const { body } = chunkedBody(3, text);
    const limit = text.length + 2 * chunkBytes;
    const read = await readOrderRequest(request(body), limit);
    expect(read).toMatchObject({ idempotencyKey: 'k-1', order: { orderId: 'o-1' } });
    const over = chunkedBody(3, text);
    expect(await readOrderRequest(request(over.body), limit - 1)).toMatchObject({ status: 413 });
  });

  it('takes a request with no body for an empty one: not JSON', async () => {
    const response = await readOrderRequest(
      {
        headers: new Headers({ 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' }),
        body: null,
        readBody: () => Promise.resolve(new Uint8Array(0)),
      } as IntakeHttpRequest,
      4096,
    );
    expect(response).toMatchObject({ status: 400, body: { type: 'urn:idempotent-order-consumer:problem:body-not-json' } });
  });
});
