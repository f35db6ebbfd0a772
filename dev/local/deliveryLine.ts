import type { InvocationResult, ServiceBusDelivery } from '../../emulators/functions-host/hostInvocation.js';
import { findOutcomeLine } from './outcomeLine.js';

/** One short line per delivery for a person watching `--serve`: function, MessageId, delivery, outcome. */
export function deliveryLine(functionName: string, delivery: ServiceBusDelivery, result: InvocationResult): string {
  const line = findOutcomeLine(result);
  const outcome = String(line?.outcome ?? (result.error === undefined ? 'done' : 'failed'));
  const reason = line?.reason === undefined ? undefined : shorten(String(line.reason), 80);
  const thrown = result.error === undefined ? '' : ' -> handed back to Service Bus';
  return `${functionName}  ${delivery.messageId ?? '(no MessageId)'}  delivery ${delivery.deliveryCount}  ${outcome}${reason ? ` (${reason})` : ''}${thrown}`;
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
