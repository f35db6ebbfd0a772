// `npm run bench -- --preload 10x`: a second container that already holds ten times the documents the
// run leaves in the first, spread over as many partitions as that many orders would use, so the
// bench can show that a path's rate and cost do not depend on how much the container holds.
import type { Container, OperationInput } from '@azure/cosmos';
import { ids, runAll } from './consumerScenarios.js';
import { gateDoc, inboxDoc, orderDoc, outboxDoc } from './bareLoops.js';

const documentsPerOrder = 4;

/** `10x` (or `10`) -> 10; anything else is refused with what it should look like. */
export function preloadFactorFrom(args: readonly string[]): number | undefined {
  const at = args.indexOf('--preload');
  if (at < 0) return undefined;
  const text = args[at + 1] ?? '';
  const factor = Number(/^(\d{1,3})x?$/.exec(text)?.[1]);
  if (!Number.isInteger(factor) || factor < 1 || factor > 100)
    throw new Error(`--preload takes a factor from 1x to 100x, such as --preload 10x; got '${text}'`);
  return factor;
}

/** At least `documents` documents: whole orders (order, outbox entry, gate, inbox marker), one partition each. */
export async function preloadOrders(container: Container, documents: number): Promise<number> {
  const orderIds = ids(Math.ceil(documents / documentsPerOrder));
  await runAll(orderIds.length, async (i) => {
    const orderId = orderIds[i]!;
    const ops: OperationInput[] = [orderDoc(orderId), outboxDoc(orderId), gateDoc(orderId, 'closed'), inboxDoc(orderId)].map((resourceBody) => ({
      operationType: 'Create',
      resourceBody,
    }));
    await container.items.batch(ops, orderId);
  });
  return orderIds.length * documentsPerOrder;
}
