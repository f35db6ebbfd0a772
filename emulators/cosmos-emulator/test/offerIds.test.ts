import { describe, expect, it } from 'vitest';
import { OfferBook } from '../offers.js';

// An offer's id is a resource id: base64 with '-' for '/'. A '/' made the SDK refuse the offer's
// replace ("Id contains illegal chars") about one container in sixteen.
describe("the Cosmos stand-in's offer ids", () => {
  it('never hold a character the SDK refuses in an id', () => {
    const book = new OfferBook();
    const ids = Array.from(
      { length: 2_000 },
      (_, i) => book.created({ _rid: `r${i}`, _self: `dbs/d/colls/c${i}/` }, { 'x-ms-offer-throughput': '400' }, 'container')?.id ?? '',
    );
    expect(ids.every((id) => id.length === 4)).toBe(true);
    expect(ids.filter((id) => /[/\\?#]/.test(id))).toEqual([]);
  });
});
