import { PermanentMessageError } from '../idempotency/index.js';

/**
 * The message body as JSON, whatever form the host handed it in: already parsed (a string body
 * that is JSON arrives parsed), a string, or bytes. Throws a permanent error for a body that is
 * too large or not JSON: no number of redeliveries changes either.
 */
export function decodeJsonBody(body: unknown, maxBytes: number): unknown {
  // Depth first: canonical JSON, fingerprints and logging all recurse, and a hostile body nested
  // tens of thousands deep would overflow the stack in each of them (a throw that is not permanent).
  const depth = typeof body === 'string' ? textDepth(body) : body instanceof Uint8Array ? textDepth(Buffer.from(body).toString('utf8')) : valueDepth(body);
  if (depth > maxJsonDepth) {
    throw new PermanentMessageError('BodyTooDeep', `the body nests deeper than ${maxJsonDepth} levels`);
  }
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

/**
 * JSON text found inside a body (a CloudEvent's `data_base64`), bounded like a body before it is
 * parsed: `where` names it in the error.
 */
export function parseEmbeddedJson(text: string, where: string): unknown {
  if (textDepth(text) > maxJsonDepth) {
    throw new PermanentMessageError('BodyTooDeep', `${where}: the data nests deeper than ${maxJsonDepth} levels`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new PermanentMessageError('InvalidJson', `${where}: the CloudEvent data is not base64-encoded JSON`);
  }
}

/**
 * Runs a parser that does no I/O: whatever it throws that is not already a permanent failure
 * (a stack overflow in a walk, a value JSON cannot hold) comes from the message itself, so no
 * redelivery can change it. Left as it is, it would be taken for a failure that heals with time.
 */
export function refusingUnreadable<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof PermanentMessageError) throw error;
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new PermanentMessageError('InvalidBody', `the message could not be read (${what.slice(0, 200)})`, undefined, { cause: error });
  }
}

/** Far beyond any order message (they nest 3 deep), far below what recursion in the runtime survives. */
export const maxJsonDepth = 64;

/** Nesting depth of JSON text, counted without parsing (brackets inside strings do not count). */
function textDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth -= 1;
    if (deepest > maxJsonDepth) return deepest;
  }
  return deepest;
}

/** Nesting depth of an already parsed value, without recursion, stopping past the limit. */
function valueDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [next, depth] = pending.pop() as [unknown, number];
    if (typeof next !== 'object' || next === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > maxJsonDepth) return deepest;
    for (const child of Object.values(next)) pending.push([child, depth + 1]);
  }
  return deepest;
}

function byteLengthOf(body: unknown): number {
  // Stryker disable next-line StringLiteral: '' is Node's default encoding, utf8
  if (typeof body === 'string') return Buffer.byteLength(body, 'utf8');
  if (body instanceof Uint8Array) return body.byteLength;
  if (body === undefined || body === null) return 0;
  // Stryker disable next-line StringLiteral: an object body always has a JSON form (the host parsed it from JSON), and '' is Node's default encoding
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
