import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { tallyKey, tallySince } from '../requestTally.js';

const request = (method: string, url: string, headers: Record<string, string> = {}) => ({ method, url, headers }) as unknown as IncomingMessage;

describe('requestTally', () => {
  describe('tallyKey', () => {
    it('names the container and the kind, a change-feed read apart from a point read', () => {
      expect(tallyKey(request('GET', '/dbs/orders/colls/orders/docs/o-1'))).toBe('orders read');
      expect(tallyKey(request('GET', '/dbs/orders/colls/orders/docs', { 'a-im': 'Incremental Feed' }))).toBe('orders change-feed');
      expect(tallyKey(request('POST', '/dbs/orders/colls/orders/docs', { 'x-ms-cosmos-is-batch-request': 'True' }))).toBe('orders batch');
      expect(tallyKey(request('PUT', '/dbs/orders/colls/leases/docs/l-1'))).toBe('leases replace');
      expect(tallyKey(request('GET', '/dbs/orders/colls/my%20container/docs/x'))).toBe('my container read');
      expect(tallyKey(request('GET', '/'))).toBe('- other');
    });
  });

  describe('tallySince', () => {
    it('keeps what grew between the two tallies', () => {
      expect(tallySince({ 'orders read': 2, 'leases replace': 1 }, { 'orders read': 5, 'leases replace': 1, 'orders create': 1 })).toEqual({
        'orders read': 3,
        'orders create': 1,
      });
    });
  });
});
