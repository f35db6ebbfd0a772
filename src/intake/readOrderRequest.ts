import type { z } from 'zod';
import { fingerprintPayload } from '../idempotency/index.js';
import { parseIdempotencyKey } from '../http/idempotencyKeyHeader.js';
import { issuePaths, orderPlacedSchema } from '../orders/schemas.js';
import type { OrderPlaced } from '../orders/schemas.js';
import { problem } from './intakeResponse.js';
import type { IntakeResponse } from './intakeResponse.js';

/** What the intake needs of an HTTP request: Fetch-style headers, and the body on demand. */
export interface IntakeHttpRequest {
  readonly headers: { get(name: string): string | null };
  readBody(): Promise<Uint8Array>;
}

export interface OrderRequest {
  readonly idempotencyKey: string;
  readonly order: OrderPlaced;
  /** Of the validated order, canonical: white space and key order in the body make no difference. */
  readonly fingerprint: string;
}

/** Stripe's limit; the draft sets none. Longer keys are a client bug, not an identity. */
export const maxIdempotencyKeyLength = 255;

/**
 * Everything about a request that needs no store: the key, the media type, the size, the JSON and
 * the order's schema. Each refusal names what is wrong; none of them writes anything.
 */
export async function readOrderRequest(request: IntakeHttpRequest, maxBodyBytes: number): Promise<OrderRequest | IntakeResponse> {
  const header = request.headers.get('idempotency-key');
  if (header === null || header.trim() === '') {
    return problem(400, 'idempotency-key-missing', 'Idempotency-Key header required', 'send an Idempotency-Key header, a quoted string such as "8e03978e-40d5-43e8-bc93-6894a57f9324", the same on every retry of this request');
  }
  const idempotencyKey = parseIdempotencyKey(header);
  if (idempotencyKey === undefined) {
    return problem(400, 'idempotency-key-malformed', 'Idempotency-Key header malformed', 'the Idempotency-Key must be one non-empty sf-string (RFC 8941): printable ASCII in double quotes, with \\ and " escaped, such as "8e03978e-40d5-43e8-bc93-6894a57f9324"');
  }
  if (idempotencyKey.length > maxIdempotencyKeyLength) {
    return problem(400, 'idempotency-key-malformed', 'Idempotency-Key header too long', `the Idempotency-Key is ${idempotencyKey.length} characters; at most ${maxIdempotencyKeyLength} are allowed`);
  }
  const mediaType = checkMediaType(request.headers.get('content-type'));
  if (mediaType) return mediaType;
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBodyBytes) return tooLarge(declared, maxBodyBytes);
  const bytes = await request.readBody();
  if (bytes.byteLength > maxBodyBytes) return tooLarge(bytes.byteLength, maxBodyBytes);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    return problem(400, 'body-not-json', 'Body is not JSON', `the body is not UTF-8 JSON: ${(error as Error).message}`);
  }
  const parsed = orderPlacedSchema.safeParse(value);
  if (!parsed.success) return invalidOrder(parsed.error);
  return { idempotencyKey, order: parsed.data, fingerprint: fingerprintPayload('OrderPlaced', parsed.data) };
}

export function isOrderRequest(value: OrderRequest | IntakeResponse): value is OrderRequest {
  return 'idempotencyKey' in value;
}

/** application/json, with no charset or charset=utf-8 (RFC 8259 says JSON between systems is UTF-8). */
function checkMediaType(contentType: string | null): IntakeResponse | undefined {
  // Stryker disable next-line StringLiteral: without a Content-Type any stand-in text is refused as well, and the detail is built from null, not from it
  const [type = '', ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  if (type === 'application/json' && (charset === undefined || charset === 'utf-8')) return undefined;
  const got = contentType === null ? 'no Content-Type' : `Content-Type ${contentType}`;
  return problem(415, 'unsupported-media-type', 'Unsupported media type', `send the order as application/json (UTF-8); the request has ${got}`, {}, { Accept: 'application/json' });
}

function tooLarge(bytes: number, max: number): IntakeResponse {
  return problem(413, 'body-too-large', 'Body too large', `the body is ${bytes} bytes; an order may be at most ${max} bytes (INTAKE_MAX_BODY_BYTES)`);
}

function invalidOrder(error: z.ZodError): IntakeResponse {
  const errors = issuePaths(error);
  return problem(400, 'invalid-order', 'The order is not valid', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
}
