import type { z } from 'zod';
import { fingerprintPayload } from '../idempotency/index.js';
import { readBoundedBody, readIdempotencyKey } from '../http/index.js';
import { issuePaths, orderPlacedSchema } from '../orders/index.js';
import type { OrderPlaced } from '../orders/index.js';
import { problem } from './intakeResponse.js';
import type { IntakeResponse } from './intakeResponse.js';

/** What the intake needs of an HTTP request: Fetch-style headers, and the body as a stream it reads with a bound. */
export interface IntakeHttpRequest {
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
}

export interface OrderRequest {
  readonly idempotencyKey: string;
  readonly order: OrderPlaced;
  /** Of the validated order, canonical: white space and key order in the body make no difference. */
  readonly fingerprint: string;
  /**
   * A key this release refuses and the previous one accepted (an sf-string of spaces): the request
   * is answered only from what that release stored for this very request (a client's retry after
   * the deploy gets its 202 again); anything else gets this refusal, and nothing is written.
   */
  readonly refusedUnlessStored?: IntakeResponse;
}

/**
 * Everything about a request that needs no store: the key, the media type, the size, the JSON and
 * the order's schema. Each refusal names what is wrong; none of them writes anything.
 */
export async function readOrderRequest(request: IntakeHttpRequest, maxBodyBytes: number): Promise<OrderRequest | IntakeResponse> {
  const header = readIdempotencyKey(request.headers.get('idempotency-key'));
  if (header.kind === 'missing') {
    return problem(
      400,
      'idempotency-key-missing',
      'Idempotency-Key header required',
      'send an Idempotency-Key header, such as 8e03978e-40d5-43e8-bc93-6894a57f9324 (or quoted, as the IETF draft writes it), the same on every retry of this request',
    );
  }
  if (header.kind === 'malformed' && header.previousReleaseKey === undefined) return problem(400, 'idempotency-key-malformed', header.title, header.detail);
  const refusedUnlessStored = header.kind === 'malformed' ? problem(400, 'idempotency-key-malformed', header.title, header.detail) : undefined;
  const idempotencyKey = header.kind === 'malformed' ? (header.previousReleaseKey as string) : header.key;
  const mediaType = checkMediaType(request.headers.get('content-type'));
  if (mediaType) return mediaType;
  // A declared length over the limit is refused unread; any other is checked against the bytes themselves.
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBodyBytes) return tooLarge(`is ${declared} bytes`, maxBodyBytes);
  const body = await readBoundedBody(request.body, maxBodyBytes);
  if (body.kind === 'too-large') return tooLarge(`is over ${maxBodyBytes} bytes`, maxBodyBytes);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body.bytes));
  } catch (error) {
    return problem(400, 'body-not-json', 'Body is not JSON', `the body is not UTF-8 JSON: ${(error as Error).message}`);
  }
  const parsed = orderPlacedSchema.safeParse(value);
  if (!parsed.success) return invalidOrder(parsed.error);
  // What the queue carries is the validated order written out again, its numbers in full (`1e5` is
  // 100000): it must fit the same bound, which is at most MAX_MESSAGE_BYTES, or the consumer refuses it.
  const sentOn = new TextEncoder().encode(JSON.stringify(parsed.data)).byteLength;
  if (sentOn > maxBodyBytes) {
    return tooLarge(`as it is sent on to the orders queue (fields an order does not have left out, numbers written in full) is ${sentOn} bytes`, maxBodyBytes);
  }
  return {
    idempotencyKey,
    order: parsed.data,
    fingerprint: fingerprintPayload('OrderPlaced', parsed.data),
    ...(refusedUnlessStored ? { refusedUnlessStored } : {}),
  };
}

export function isOrderRequest(value: OrderRequest | IntakeResponse): value is OrderRequest {
  return 'idempotencyKey' in value;
}

/** application/json, with no charset or charset=utf-8 (RFC 8259 says JSON between systems is UTF-8). */
function checkMediaType(contentType: string | null): IntakeResponse | undefined {
  // Stryker disable next-line StringLiteral: without a Content-Type any stand-in text is refused as well, and the detail is built from null, not from it
  const [type = '', ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  if (type === 'application/json' && (charset === undefined || charset === 'utf-8')) return undefined;
  const got = contentType === null ? 'no Content-Type' : `Content-Type ${contentType}`;
  return problem(
    415,
    'unsupported-media-type',
    'Unsupported media type',
    `send the order as application/json (UTF-8); the request has ${got}`,
    {},
    { Accept: 'application/json' },
  );
}

function tooLarge(size: string, max: number): IntakeResponse {
  return problem(413, 'body-too-large', 'Body too large', `the body ${size}; an order may be at most ${max} bytes (INTAKE_MAX_BODY_BYTES)`);
}

function invalidOrder(error: z.ZodError): IntakeResponse {
  const errors = issuePaths(error);
  return problem(400, 'invalid-order', 'The order is not valid', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
}
