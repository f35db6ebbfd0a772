import { describe, expect, it } from 'vitest';
import { isEmptySelection, isSelected } from '../../../src/cli/deadLetterSelection.js';

const now = Date.parse('2026-11-30T12:00:00Z');
const message = {
  sequenceNumber: 7,
  messageId: 'm-7',
  deadLetterReason: 'MaxDeliveryCountExceeded',
  enqueuedTimeUtc: new Date(now - 3_600_000),
  body: { orderId: 'o-9' },
};
const none = { targets: [], all: false };

describe('dead-letter selection', () => {
  it('matches targets by sequence number or MessageId', () => {
    expect(isSelected(message, { ...none, targets: ['7'] }, now)).toBe(true);
    expect(isSelected(message, { ...none, targets: ['m-7'] }, now)).toBe(true);
    expect(isSelected(message, { ...none, targets: ['8'] }, now)).toBe(false);
  });

  it('finds a delayed-retry copy by the MessageId of the message it retries', () => {
    const copy = { ...message, messageId: 'm-7~retry-3', retryOf: 'm-7' };
    expect(isSelected(copy, { ...none, targets: ['m-7'] }, now)).toBe(true);
    expect(isSelected(copy, { ...none, targets: ['m-7~retry-3'] }, now)).toBe(true);
    expect(isSelected({ ...copy, retryOf: undefined }, { ...none, targets: ['m-7'] }, now)).toBe(false);
  });

  it('applies reason (any case), age and body filters', () => {
    expect(isSelected(message, { ...none, all: true, reason: 'maxdeliverycountexceeded' }, now)).toBe(true);
    expect(isSelected(message, { ...none, all: true, reason: 'TTLExpiredException' }, now)).toBe(false);
    expect(isSelected(message, { ...none, all: true, olderThanMs: 1_800_000 }, now)).toBe(true);
    expect(isSelected(message, { ...none, all: true, newerThanMs: 1_800_000 }, now)).toBe(false);
    expect(isSelected(message, { ...none, all: true, bodyContains: 'o-9' }, now)).toBe(true);
  });

  it('knows when nothing was named', () => {
    expect(isEmptySelection(none)).toBe(true);
    expect(isEmptySelection({ ...none, reason: 'x' })).toBe(false);
  });
});
