import { describe, expect, it } from 'vitest';
import { chainReport, median, ordersPerSecond, percentile } from '../../../bench/chainReport.js';
import type { ChainHalf, ExactlyOnce } from '../../../bench/chainReport.js';
import { recordDelivery } from '../../../bench/chainRound.js';
import type { OrderDeliveries, OrderTimeline } from '../../../bench/chainRound.js';

const timeline = (orderId: string, sentAt: number, bookedAt: number): OrderTimeline => ({
  orderId,
  sentAt,
  acceptedAt: sentAt + 10,
  placedEnqueuedAt: sentAt + 20,
  storedAt: sentAt + 30,
  acceptedEnqueuedAt: sentAt + 40,
  bookedAt,
});
const noPublisher = { invocations: 0, documents: 0, entries: 0, busyMs: 0 };
const half = (
  timelines: readonly OrderTimeline[],
  refused: Record<string, number> = {},
  requests: Record<string, number> = {},
  cpu = { chainMs: 0, benchMs: 0, wallMs: 1 },
  publisher = noPublisher,
): ChainHalf => ({ timelines, refused, requests, cpu, publisher });
const once = (chain: 'app' | 'bare', notOnce: string[] = [], bookings = 2): ExactlyOnce => ({
  chain,
  orders: 2,
  bookings,
  notOnce,
  deliveries: { processOrder: 2, requestShipment: 3 },
});

describe('chainReport', () => {
  describe('percentile', () => {
    it('takes the nearest rank, whatever order the values come in', () => {
      expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
      expect(
        percentile(
          Array.from({ length: 100 }, (_, i) => 100 - i),
          99,
        ),
      ).toBe(99);
      expect(percentile([7], 99)).toBe(7);
      expect(percentile([], 50)).toBe(0);
    });
  });

  describe('median', () => {
    it('averages the middle two of an even count', () => {
      expect(median([4, 1, 3, 2])).toBe(2.5);
      expect(median([3, 1, 2])).toBe(2);
    });
  });

  describe('ordersPerSecond', () => {
    it('counts from the first request sent to the last booking stored', () => {
      expect(ordersPerSecond(half([timeline('a', 1_000, 1_500), timeline('b', 1_200, 3_000), timeline('c', 1_100, 2_000)]))).toBe(1.5);
    });
  });

  describe('the report', () => {
    const rounds = [
      {
        app: half(
          [timeline('a', 0, 1_000), timeline('b', 0, 2_000)],
          {},
          { 'orders read': 8, 'orders change-feed': 3, 'leases replace': 1 },
          { chainMs: 30, benchMs: 20, wallMs: 100 },
          { invocations: 1, documents: 9, entries: 4, busyMs: 50 },
        ),
        bare: half([timeline('c', 0, 500), timeline('d', 0, 1_000)], {}, { 'orders read': 6 }, { chainMs: 10, benchMs: 40, wallMs: 50 }),
      },
    ];
    const setup = { orders: 2, rounds: 1, concurrency: 4 };

    it('prints the paired ratio, the percentiles and the deliveries per order, and passes when every order was booked once', () => {
      const { lines, ok } = chainReport(setup, rounds, [once('app'), once('bare')]);
      const text = lines.join('\n');
      expect(ok).toBe(true);
      expect(text).toMatch(/app \(local Functions host\) +1\.0 +1000 +2000/);
      expect(text).toMatch(/bare SDK chain +2\.0 +500 +1000/);
      expect(text).toMatch(/ratio app \/ bare \(paired, median\) +0\.50x\n {2}latency app \/ bare: p50 2\.00x, p99 2\.00x\n/);
      expect(text).toMatch(/enqueued -> booked \(requestShipment\) +960 +1960 +460 +960/);
      expect(text).toContain('app: deliveries per order: processOrder 1.00, requestShipment 1.50');
      expect(text).toMatch(
        /chain process CPU \(busy\) +15\.00 \(30 %\) +5\.00 \(20 %\)\n +bench process CPU: stand-ins, clients \(busy\) +10\.00 \(20 %\) +20\.00 \(80 %\)\n +outbox publisher time \(busy\) +25\.00 \(50 %\) +0\.00 \(0 %\)/,
      );
      expect(text).toMatch(/publisher invocations per order +0\.50 +-\n +change-feed documents, entries per invocation +9\.0, 4\.0 +-/);
      expect(text).toMatch(/leases replace +0\.50 +0\.00\n +orders change-feed +1\.50 +0\.00\n +orders read +4\.00 +3\.00\n +total +6\.00 +3\.00/);
    });

    it('fails when an order was not booked exactly once, when the carrier booked more, or when a request was refused', () => {
      expect(chainReport(setup, rounds, [once('app', ['b']), once('bare')]).ok).toBe(false);
      expect(chainReport(setup, rounds, [once('app'), once('bare', [], 3)]).ok).toBe(false);
      const refused = [{ ...rounds[0]!, bare: half(rounds[0]!.bare.timelines, { 503: 1 }) }];
      const { lines, ok } = chainReport(setup, refused, [once('app'), once('bare')]);
      expect(ok).toBe(false);
      expect(lines.join('\n')).toContain('FAIL bare: 2 orders, 2 bookings at the carrier, 0 not booked exactly once, 1 requests not answered 202');
    });
  });
});

describe('recordDelivery', () => {
  it("counts each function's deliveries per order and keeps the first enqueued time of each message", () => {
    const deliveries = new Map<string, OrderDeliveries>();
    recordDelivery(deliveries, { fn: 'processOrder', orderId: 'o', enqueuedAt: 10, deliveryCount: 1, failed: true });
    recordDelivery(deliveries, { fn: 'processOrder', orderId: 'o', enqueuedAt: 10, deliveryCount: 2, failed: false });
    recordDelivery(deliveries, { fn: 'requestShipment', orderId: 'o', enqueuedAt: 30, deliveryCount: 1, failed: false });
    recordDelivery(deliveries, { fn: 'requestShipment', deliveryCount: 1, failed: false });
    expect(deliveries).toEqual(new Map([['o', { processOrder: 2, requestShipment: 1, placedEnqueuedAt: 10, acceptedEnqueuedAt: 30 }]]));
  });
});
