import { consumerKeyPrefix } from '../idempotency/index.js';
import type { DocumentStore } from '../idempotency/index.js';
import type { ParkedItemDocument, ParkedItemState } from '../orders/index.js';

/**
 * A parked item whose effect may still come: waiting for its order (`parked`), or rejected and left
 * to an operator's parked resubmit (`rejected`, `resubmitting`). Applied items have their marker or
 * status version already; resubmitted ones sent a copy that the tool's looks or the store meet.
 */
const pending: ReadonlySet<ParkedItemState> = new Set(['parked', 'rejected', 'resubmitting']);

/**
 * Why an edit must wait for a message parked under the original's key, or undefined. A copy under
 * the key that arrived before its order left the queue as a parked item, an effect deferred that the
 * store's markers do not show: it is applied when the order comes, beside the edited copy. Looked
 * for in the partitions of the original's order and of the edited one (the original's body may not
 * parse, which is often why it is edited).
 */
export async function parkedUnderKey(
  store: DocumentStore,
  key: string,
  orderIds: readonly (string | undefined)[],
  consumerName?: string,
): Promise<string | undefined> {
  const dedupKey = `${consumerKeyPrefix(consumerName)}${key}`;
  for (const orderId of new Set(orderIds.filter((id): id is string => typeof id === 'string'))) {
    const items = await store.find<ParkedItemDocument>({ docType: 'parked', partitionKey: orderId, equals: { dedupKey } });
    const waiting = items.map((i) => i.document).find((item) => pending.has(item.state));
    if (waiting)
      return `a message under the same key is parked (${waiting.id}, ${waiting.state}) in order ${JSON.stringify(orderId)}: it is applied when the order comes (or when a parked resubmit sends it), and an edited copy under a new key would add a second effect beside it. Let it apply (then the original is a duplicate), or discard it (dlq parked discard) first`;
  }
  return undefined;
}
