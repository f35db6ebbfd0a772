import { randomBytes } from 'node:crypto';

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` for an outgoing call made within the invocation: the invocation's trace id
 * and flags with a span id of its own (the call is a child of the invocation). Without a usable
 * parent, a new trace starts, so the carrier can still join its logs to ours.
 */
export function childTraceparent(parent: string | undefined): string {
  const match = parent ? traceparentPattern.exec(parent.trim().toLowerCase()) : null;
  const spanId = nonZeroHex(8);
  if (match && !/^0+$/.test(match[1] ?? '')) return `00-${match[1]}-${spanId}-${match[3]}`;
  return `00-${nonZeroHex(16)}-${spanId}-01`;
}

function nonZeroHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString('hex');
    if (!/^0+$/.test(hex)) return hex;
  }
}
