import type { InvocationResult } from '../host/hostInvocation.js';

/** A consumer's one structured line for an invocation ("order-message" or "shipment-message"), parsed; undefined if it wrote none. */
export function findOutcomeLine(result: InvocationResult): Record<string, unknown> | undefined {
  const line = result.logs.map((l) => l.message).find((m) => m.includes('"event":"order-message"') || m.includes('"event":"shipment-message"'));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}
