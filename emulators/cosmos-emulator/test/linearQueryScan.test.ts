import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { compiledQuery, installLinearQueryScan, linearScanOf } from '../linearQueryScan.js';

// The query library copies the collection with a spread per document (the square of the container's
// size a query); the stand-in rewrites that copy to a linear one. Every answer must stay the same.
const load = createRequire(require.resolve('@vercel/cosmosdb-server/lib/account/items'));
const library = load('@zeit/cosmosdb-query') as { default: (sql: string) => { readonly code: string; readonly _code: string | null } };
const execute = (load('@zeit/cosmosdb-query/lib/executor') as { default: (docs: unknown[], options: Record<string, unknown>) => unknown }).default;

/** The library's own compiled code, before any rewrite (the getter fills `_code` as it compiles). */
function rawCode(sql: string): string {
  const query = library.default(sql);
  void query.code;
  return query._code ?? '';
}

const docs = Array.from({ length: 40 }, (_, i) => ({
  id: `d-${i}`,
  _rid: `r${String(i).padStart(3, '0')}`,
  orderId: `o-${i % 7}`,
  docType: ['parked', 'order', 'outbox'][i % 3],
  state: i % 2 === 0 ? 'parked' : 'rejected',
  parkedAt: `2026-12-03T10:${String(59 - i).padStart(2, '0')}:00Z`,
  lines: [{ sku: `s-${i}` }, { sku: 'shared' }],
}));
const queries: [string, Record<string, string>?][] = [
  ["SELECT TOP 1 VALUE c.id FROM c WHERE c.docType = 'parked' AND c.state = 'parked'"],
  [
    'SELECT TOP 5 * FROM c WHERE c.docType = @docType AND c.parkedAt < @before ORDER BY c.parkedAt',
    { '@docType': 'parked', '@before': '2026-12-03T10:50:00Z' },
  ],
  ['SELECT r.id, r.orderId FROM root r WHERE r.state = "rejected"'],
  ['SELECT VALUE COUNT(1) FROM c WHERE c.docType = "order"'],
  ['SELECT c.id, l.sku FROM c JOIN l IN c.lines WHERE l.sku = "shared" AND c.docType = "outbox"'],
  ['SELECT * FROM c'],
];

describe('the Cosmos stand-in copies a collection once per query in linear time', () => {
  it.each(queries)('answers %s exactly as the library does', (sql, parameters = {}) => {
    const raw = rawCode(sql);
    const linear = linearScanOf(raw);
    expect(linear, 'the copy was rewritten').not.toBe(raw);
    expect(linear).not.toMatch(/\$c\.reduce/);
    const params = Object.entries(parameters).map(([name, value]) => ({ name, value }));
    expect(execute(docs, { code: linear, parameters: params })).toEqual(execute(docs, { code: raw, parameters: params }));
  });

  it('is what the installed library compiles, and installing twice changes nothing', () => {
    installLinearQueryScan();
    installLinearQueryScan();
    const sql = "SELECT * FROM c WHERE c.docType = 'parked'";
    expect(compiledQuery(sql)).toBe(linearScanOf(rawCode(sql)));
    expect(compiledQuery(sql)).not.toMatch(/\$c\.reduce/);
  });

  it('leaves code without the copy as it is', () => {
    expect(linearScanOf('($c) => $c.length')).toBe('($c) => $c.length');
  });
});
