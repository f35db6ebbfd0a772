import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { dataBodyBytes, maxJsonDepth } from '../servicebus/index.js';

/**
 * The body as the tool reads it, never walked before it is bounded: a data section's text (the SDK's
 * `body` is its own JSON.parse of those bytes, a value as deep as the sender chose), a string or
 * bytes as they came, or a decoded value no deeper than the consumer accepts. The parsers the tool
 * calls check depth on text before they parse it.
 */
export function bodyForTool(m: Pick<ServiceBusReceivedMessage, 'body' | '_rawAmqpMessage'>): unknown {
  const bytes = dataBodyBytes(m as ServiceBusReceivedMessage);
  if (bytes !== undefined) return Buffer.from(bytes).toString('utf8');
  if (typeof m.body === 'string' || m.body instanceof Uint8Array) return m.body;
  return isWithinDepth(m.body, maxJsonDepth) ? m.body : `(a decoded body nested deeper than ${maxJsonDepth} levels, not shown)`;
}

/** At most this much of a body is printed; the rest is counted. */
export const maxShownBodyChars = 256 * 1024;

/** The body for `show`: JSON when it parses within the depth bound, else its text, cut to a bound. */
export function bodyToShow(body: unknown): unknown {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return body;
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  if (text.length <= maxShownBodyChars && isTextWithinDepth(text, maxJsonDepth)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text.length > maxShownBodyChars ? `${text.slice(0, maxShownBodyChars)}… (${text.length - maxShownBodyChars} more characters)` : text;
}

/** Whether a decoded value nests no deeper than `limit`, found without recursion and stopping past it. */
export function isWithinDepth(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [next, depth] = pending.pop() as [unknown, number];
    if (typeof next !== 'object' || next === null) continue;
    if (depth > limit) return false;
    for (const child of Object.values(next)) pending.push([child, depth + 1]);
  }
  return true;
}

/** Whether JSON text nests no deeper than `limit`, counted without parsing (brackets in strings do not count). */
function isTextWithinDepth(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x5b || c === 0x7b) && ++depth > limit) return false;
    else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return true;
}
