import { wholeNumber } from './settingKinds.js';

/** What one message may be and do. */
export const messageSettings = {
  MAX_MESSAGE_BYTES: wholeNumber(
    { min: 1024, default: 256 * 1024 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'bytes',
      defaultNote: '256 KiB',
      description: 'Larger bodies are rejected as `MessageTooLarge`.',
    },
  ),
  MAX_CONCURRENCY_ATTEMPTS: wholeNumber(
    { min: 1, default: 10 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'attempts',
      description: 'Read-modify-replace rounds after lost races before handing the message back as `retry`.',
    },
  ),
  STATUS_VERSION_MAX_STEP: wholeNumber(
    { min: 1, default: 1000 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'versions',
      description:
        "How far one `OrderStatusChanged` may move an order's status version above the stored one (0 for an order with no status yet). A bigger jump is rejected as `VersionJump`, recorded and dead-lettered: legitimate reordering never holds back that many changes, and a huge version would make every later real change stale.",
    },
  ),
};
