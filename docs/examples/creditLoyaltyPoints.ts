// A consumer of your own, on the transport- and store-agnostic core: credit loyalty points once per
// message, whatever the broker and the store. Compiled and run by test/docs/examples.test.ts.
import { create, createOrClassify, fingerprintPayload, replace, resolveDedupKey } from '../../src/idempotency/index.js';
import type { DocumentStore } from '../../src/idempotency/index.js';

interface PointsEarned {
  customerId: string;
  points: number;
}
interface Account {
  id: string;
  balance: number;
}
type Outcome = 'credited' | 'duplicate' | 'conflict' | 'no-key' | 'retry';
const markerTtlSeconds = 30 * 24 * 3600; // longer than the broker can redeliver or an operator resubmit
const maxAttempts = 10; // lost races in a row before the message goes back to the broker

export async function creditPointsOnce(store: DocumentStore, message: { messageId?: string; body: PointsEarned }): Promise<Outcome> {
  const key = resolveDedupKey({ messageId: message.messageId }, 'loyalty'); // composite: consumer|key
  if (!key) return 'no-key'; // never process a message keyless
  const fingerprint = fingerprintPayload('PointsEarned', message.body);
  const { customerId, points } = message.body;
  const marker = { id: `inbox|${key.value}`, fingerprint, ttl: markerTtlSeconds };
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const account = (await store.read<Account>(customerId, customerId)) ?? { document: { id: customerId, balance: 0 }, etag: '' };
    const credited = { ...account.document, balance: account.document.balance + points };
    // The marker and the balance change commit together: either both exist or neither.
    // On the marker's 409 the core reads it once and compares fingerprints: the same message or another.
    const operations = [create(marker), account.etag ? replace(credited, account.etag) : create(credited)];
    const result = await createOrClassify(store, customerId, operations, (stored: typeof marker) => stored.fingerprint === fingerprint);
    if (result.kind === 'committed') return 'credited';
    if (result.kind === 'same-request') return 'duplicate';
    if (result.kind === 'other-request') return 'conflict';
    // The account changed between our read and our write (or the marker expired since): read again.
  }
  return 'retry'; // throw, so the broker redelivers later
}
