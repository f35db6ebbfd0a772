import type { InvocationResult } from '../../emulators/functions-host/hostInvocation.js';

/** A function's one structured line for an invocation ("order-message", "shipment-message" or "order-request"), parsed; undefined if it wrote none. */
export function findOutcomeLine(result: InvocationResult): Record<string, unknown> | undefined {
  const line = result.logs.map((l) => l.message).find((m) => /"event":"(order-message|shipment-message|order-request)"/.test(m));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}
