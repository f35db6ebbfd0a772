import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { publishedPathCosts, renderCostSummary, renderCostTable } from '../../bench/costTable.js';
import type { PathCost } from '../../bench/costTable.js';

// The table `npm run bench` prints, computed as it does after its timed rounds: each path over 3
// messages of fixed ids, its store calls counted and priced by the published model. The docs quote it.
describe('the capacity table (docs/deployment.md, README.md)', () => {
  let costs: PathCost[];
  beforeAll(async () => {
    costs = await publishedPathCosts();
  });

  it('docs/deployment.md quotes the table the bench prints', () => {
    expect(readFileSync('docs/deployment.md', 'utf8')).toContain(`${renderCostTable(costs, 'model')}\n`);
  });

  it("README.md's capacity line quotes its summary", () => {
    expect(readFileSync('README.md', 'utf8')).toContain(renderCostSummary(costs));
  });

  it("prices every path, a first delivery above its redelivery; an unreadable message's redelivery to the instance that rejected it costs nothing", () => {
    const remembered = 'invalid, each redelivery';
    expect(costs.filter((c) => c.name !== remembered).every((c) => c.trips >= 1 && c.requestUnits >= 1)).toBe(true);
    expect(costs.find((c) => c.name === remembered)).toMatchObject({ trips: 0, requestUnits: 0 });
    const ru = (name: string) => costs.find((c) => c.name === name)!.requestUnits;
    expect(ru('OrderPlaced, new')).toBeGreaterThan(ru('OrderPlaced, duplicate (redelivered)'));
    expect(ru('conflict, first delivery')).toBeGreaterThan(ru('conflict, each redelivery'));
  });
});
