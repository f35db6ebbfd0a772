import { describe, expect, it } from 'vitest';
import { parkedTable } from '../../../src/cli/parkedCommandGroup.js';

describe('the parked list table', () => {
  it('spells out an item a resubmit claimed, state uncut', () => {
    const table = parkedTable([
      {
        orderId: 'o1',
        id: 'parked|payment|pay-1',
        state: 'resubmitting',
        messageType: 'PaymentReceived',
        messageId: 'pay-1',
        dedupKey: 'pay-1',
        parkedAt: '2026-11-30T12:00:00.000Z',
        reason: 'OrderNeverArrived',
        resubmitClaimedAt: '2026-11-30T14:00:00.000Z',
      },
    ]);
    expect(table.split('\n')[1]).toMatch(/PaymentReceived\s+pay-1\s+resubmitting\s+OrderNeverArrived/);
  });
});
