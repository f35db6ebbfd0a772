import { z } from 'zod';
import { days } from './days.js';
import { documentLifetimeAtMost, textWithDefault, wholeNumber, withRule } from './settingKinds.js';

/** The parked-item sweeper and the outbox publisher and sweeper. */
export const sweeperSettings = {
  PARKED_ITEM_HORIZON_SECONDS: {
    ...withRule(() => z.coerce.number().int().min(1).optional(), {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description: 'How long a parked payment or status change waits for its order before the sweeper rejects it as `OrderNeverArrived`.',
    }),
    // Absent means the resubmit horizon: the reference names that setting instead of a value.
    default: undefined,
    defaultText: '`DLQ_RESUBMIT_HORIZON_SECONDS`',
  },
  PARKED_SWEEP_SCHEDULE: textWithDefault('0 */5 * * * *', {
    table: 'app',
    readBy: ['host', 'app'],
    unit: 'NCRONTAB',
    description:
      "The sweeper's timer (six fields, UTC). **Required by the host** (the binding reads `%PARKED_SWEEP_SCHEDULE%`): the Bicep, `local.settings.sample.json` and `npm run local` set it.",
  }),
  PARKED_SWEEP_MIN_AGE_SECONDS: wholeNumber(
    { min: 0, default: 60 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description: "The sweeper leaves younger parked items to their order's own batch.",
    },
  ),
  SWEEP_MAX_ITEMS_PER_RUN: wholeNumber(
    { min: 1, default: 500, atMost: [5000, 'must be at most 5000 (one run holds a page in memory)'] },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'documents',
      description:
        "What one run of the parked-item sweeper or the outbox sweeper reads (one page, oldest first; at most 5000): a run's memory and RU are bounded however many items wait. The parked sweeper goes on from where its last full page ended.",
    },
  ),
  OUTBOX_PUBLISHED_TTL_SECONDS: wholeNumber(
    { min: 1, default: days(7), atMost: documentLifetimeAtMost() },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      defaultNote: '7 d',
      description: "How long a published outbox entry stays (as history) before it expires (at most 2147483647, Cosmos DB's largest ttl).",
    },
  ),
  OUTBOX_SWEEP_SCHEDULE: textWithDefault('30 */1 * * * *', {
    table: 'app',
    readBy: ['host', 'app'],
    unit: 'NCRONTAB',
    description: "The outbox sweeper's timer. **Required by the host**, like `PARKED_SWEEP_SCHEDULE`.",
  }),
  OUTBOX_SWEEP_MIN_AGE_SECONDS: wholeNumber(
    { min: 1, default: 60 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description: 'The sweeper republishes entries pending longer than this (the change feed had its chance).',
    },
  ),
  OUTBOX_LAG_ALERT_SECONDS: wholeNumber(
    { min: 1, default: 300 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description: 'Above this age of the oldest pending entry, each sweep writes its `outbox-lag` line at error level.',
    },
  ),
  OUTBOX_MARK_CONCURRENCY: wholeNumber(
    {
      min: 1,
      default: 16,
      atMost: [100, 'must be at most 100 (a change-feed page holds at most 100 documents; more marks in flight only make a bigger burst of request units)'],
    },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'marks',
      description:
        "How many sent entries the outbox publisher (and its sweeper) marks `published` (or `failed`) at once, each with its own etag-guarded replace in its entry's partition (1 to 100; 1 marks one after another); a page's sends, one per destination, go out under the same bound. Each mark costs a replace's request units whenever it runs; the bound caps the burst a page of up to 100 entries makes on the container.",
    },
  ),
};
