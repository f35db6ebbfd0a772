import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explorationBudget } from './budget.js';
import { describeFailure } from './orderFlowsProperty.js';
import { outboxProperty } from './outboxProperty.js';

/**
 * The outbox publisher (its change-feed entry point and its sweeper, built by createOutboxPublisher)
 * explored under generated scenarios and schedules: see test/explore/world/outbox*.ts. Fixed seeds,
 * so CI checks the same schedules every time; `npm run explore -- --property outbox` draws new ones.
 */
const everyMove = [
  'write refused',
  'write applied, answer lost',
  'commit lost-race',
  'worker died',
  'worker died after its write applied',
  'worker died after its send applied',
  'send transient',
  'send lost',
  'send partial',
  'send refused',
  'copy dropped by duplicate detection',
  'batch retried',
  'batch given up to the sweeper',
  'lease lost: batch held twice',
  'sweeper published',
];

describe('the outbox publisher, explored', () => {
  it(
    "every scenario and schedule ends with one OrderAccepted entry per order, each published with its MessageId on the topic once, or failed with the broker's reason, nothing pending",
    async () => {
      const tally = new Map<string, number>();
      const result = await fc.check(outboxProperty({}, tally), explorationBudget.outbox);
      expect(result.failed, describeFailure(result)).toBe(false);
      expect(result.numRuns).toBe(explorationBudget.outbox.numRuns);
      // A world that stopped generating one of its moves would pass while exploring less: each must have happened.
      const explored = Object.fromEntries(everyMove.map((move) => [move, tally.get(move) ?? 0]));
      expect(
        Object.entries(explored)
          .filter(([, n]) => n === 0)
          .map(([move]) => move),
        JSON.stringify(explored),
      ).toEqual([]);
    },
    explorationBudget.timeoutMs,
  );

  it(
    'finds the lost event once entries are marked published before they are sent (the order publishOutboxEntries keeps)',
    async () => {
      const result = await fc.check(outboxProperty({ markBeforeSend: true }), explorationBudget['outbox/mark-before-send']);
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(/is marked published, but its message .* never reached the topic/);
    },
    explorationBudget.timeoutMs,
  );
});
