// After each drain of `npm run bench -- --host`: did every message have its effect exactly once? Read
// back from the store, order by order (untimed), for the app and the bare loop alike.
import type { Container } from '@azure/cosmos';
import type { Effect } from './hostPaths.js';

interface Stored {
  readonly docType?: string;
  readonly amountPaid?: number;
  readonly customerId?: string;
}

/** What is wrong with one order's partition for this effect; undefined when it is right. */
export function effectProblem(effect: Effect, docs: readonly Stored[]): string | undefined {
  const count = (docType: string) => docs.filter((d) => d.docType === docType).length;
  const order = docs.find((d) => d.docType === 'order');
  switch (effect) {
    case 'placed':
      return count('order') === 1 && count('outbox') === 1 ? undefined : `${count('order')} orders, ${count('outbox')} outbox entries`;
    case 'paid':
      return count('order') === 1 && order?.amountPaid === 1 ? undefined : `${count('order')} orders, amountPaid ${String(order?.amountPaid)}`;
    case 'parked':
      return count('order') === 0 && count('parked') === 1 ? undefined : `${count('order')} orders, ${count('parked')} parked items`;
    case 'unchanged':
      return count('order') === 1 && order?.customerId === 'c' && count('outbox') === 1
        ? undefined
        : `${count('order')} orders (customer ${String(order?.customerId)}), ${count('outbox')} outbox entries`;
    case 'none':
      return docs.length === 0 ? undefined : `${docs.length} documents`;
  }
}

/** The orders whose partition does not show the effect, with what it shows. */
export async function effectProblems(container: Container, effect: Effect, orderIds: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const orderId of orderIds) {
    const { resources } = await container.items.query<Stored>('SELECT c.docType, c.amountPaid, c.customerId FROM c', { partitionKey: orderId }).fetchAll();
    const problem = effectProblem(effect, resources);
    if (problem) problems.push(`${orderId}: ${problem}`);
  }
  return problems;
}
