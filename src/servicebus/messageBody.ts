import { PermanentMessageError } from '../idempotency/index.js';

/**
 * The message body as JSON, whatever form the host handed it in: already parsed (a string body
 * that is JSON arrives parsed), a string, or bytes. Throws a permanent error for a body that is
 * too large or not JSON: no number of redeliveries changes either.
 */
export function decodeJsonBody(body: unknown, maxBytes: number): unknown {
  const size = byteLengthOf(body);
  if (size > maxBytes) {
    throw new PermanentMessageError('MessageTooLarge', `the body has ${size} bytes; the limit is ${maxBytes}`);
  }
  if (typeof body === 'string') return parseJson(body);
  if (body instanceof Uint8Array) return parseJson(Buffer.from(body).toString('utf8'));
  if (body === undefined || body === null) {
    throw new PermanentMessageError('InvalidJson', 'the body is empty');
  }
  return body;
}

function byteLengthOf(body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body, 'utf8');
  if (body instanceof Uint8Array) return body.byteLength;
  if (body === undefined || body === null) return 0;
  return Buffer.byteLength(JSON.stringify(body) ?? '', 'utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const preview = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    throw new PermanentMessageError('InvalidJson', `the body is not JSON (${(error as Error).message}): ${JSON.stringify(preview)}`);
  }
}
