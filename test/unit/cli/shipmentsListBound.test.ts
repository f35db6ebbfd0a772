import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addShipmentCommands } from '../../../src/cli/shipmentCommands.js';
import { InMemoryDocumentStore, create } from '../../../src/idempotency/index.js';
import type { DocumentQuery } from '../../../src/idempotency/index.js';

// `shipments list --state completed` names every order ever booked: the list has a cap, as the
// other lists do, and says when it stopped there.
async function storeWith(count: number, state: string) {
  const store = new InMemoryDocumentStore();
  for (let n = 1; n <= count; n += 1) {
    const record = { id: `shipment|k-${n}`, orderId: `o-${n}`, docType: 'shipment', state, idempotencyKey: `k-${n}`, attempt: 1 };
    await store.commit(`o-${n}`, [create(record as never)]);
  }
  const queries: DocumentQuery[] = [];
  const find = store.find.bind(store);
  store.find = (async (query: DocumentQuery) => (queries.push(query), find(query))) as typeof store.find;
  return { store, queries };
}

async function run(args: string[], store: InMemoryDocumentStore) {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  const program = new Command().exitOverride();
  addShipmentCommands(
    program,
    { stdout: (t) => out.push(t), stderr: (t) => err.push(t) },
    (n) => void (code = n),
    (use) => use({ store, now: () => Date.parse('2026-12-04T12:00:00Z') }),
  );
  await program.parseAsync(args, { from: 'user' });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('shipments list', () => {
  it('shows at most --max records, asks the store for no more, and says it stopped (warning, truncated, exit 1)', async () => {
    const { store, queries } = await storeWith(12, 'completed');
    const listed = await run(['shipments', 'list', '--state', 'completed', '--max', '5', '--json'], store);
    const { records, truncated } = JSON.parse(listed.stdout) as { records: unknown[]; truncated: string[] };
    expect(records).toHaveLength(5);
    expect(truncated).toEqual(['shipment records: stopped after 5 rows']);
    expect(listed.stderr).toBe(
      'warning: shipment records: stopped after 5 rows (in no particular order): further ones are not listed; raise --max, or narrow with filters',
    );
    expect(listed.code).toBe(1);
    expect(queries.map((q) => q.limit)).toEqual([6]);
  });

  it('lists every record within the bound (1000 by default), exits 0, and truncates nothing', async () => {
    const { store, queries } = await storeWith(5, 'escalated');
    const listed = await run(['shipments', 'list', '--json'], store);
    expect(JSON.parse(listed.stdout)).toMatchObject({ records: { length: 5 }, truncated: [] });
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    expect(queries.map((q) => q.limit)).toEqual([1001]);
    const exact = await run(['shipments', 'list', '--max', '5', '--json'], store);
    expect(JSON.parse(exact.stdout)).toMatchObject({ records: { length: 5 }, truncated: [] });
  });
});
