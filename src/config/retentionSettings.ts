import { days } from './days.js';
import { documentLifetimeAtMost, wholeNumber } from './settingKinds.js';

/** How long inbox markers live, and the queue's properties the retention rule is checked against. */
export const retentionSettings = {
  INBOX_MARKER_TTL_SECONDS: wholeNumber(
    { min: 1, default: days(30), atMost: documentLifetimeAtMost(2) },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 's',
      defaultNote: '30 d',
      description:
        "Lifetime of inbox markers and rejection records; must cover the retention rule below (at most 1073741823: payment claims live twice as long, and Cosmos DB's largest ttl is 2147483647 s).",
    },
  ),
  QUEUE_MAX_DELIVERY_COUNT: wholeNumber(
    { min: 1, default: 10 },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 'deliveries',
      description: "The queue's `maxDeliveryCount` (for the retention check).",
    },
  ),
  QUEUE_LOCK_DURATION_SECONDS: wholeNumber(
    { min: 5, default: 60 },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 's',
      description: "The queue's lock duration.",
    },
  ),
  LOCK_RENEWAL_MAX_SECONDS: wholeNumber(
    { min: 0, default: 300 },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 's',
      description: 'host.json `maxAutoLockRenewalDuration`: how long the host keeps renewing a lock (a test keeps the two equal).',
    },
  ),
  QUEUE_MESSAGE_TTL_SECONDS: wholeNumber(
    { min: 1, default: days(14) },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 's',
      defaultNote: '14 d',
      description: "The queue's default message time-to-live.",
    },
  ),
  DLQ_RESUBMIT_HORIZON_SECONDS: wholeNumber(
    { min: 0, default: days(14), atMost: documentLifetimeAtMost() },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 's',
      defaultNote: '14 d',
      description: "How long after dead-lettering operators may still resubmit (at most 2147483647: it is also the operator-action records' ttl).",
    },
  ),
};
