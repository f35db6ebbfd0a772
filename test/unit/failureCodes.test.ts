import { describe, expect, it } from 'vitest';
import { permanentFailureCodes } from '../../src/idempotency/index.js';
import { orderFailure } from '../../src/orders/failureCodes.js';
import { shipmentFailure } from '../../src/shipments/failureCodes.js';

/** Rejection records and parked items store these strings and the operator tool reads them: none may change. */
describe('the reason codes, core and domains', () => {
  it('keep the strings earlier releases stored', () => {
    expect(permanentFailureCodes).toEqual([
      'InvalidJson',
      'SchemaViolation',
      'NoDedupKey',
      'InvalidIdempotencyKey',
      'InvalidCloudEvent',
      'BodyTooDeep',
      'InvalidBody',
      'AmbiguousProperty',
      'UnknownMessageType',
      'MessageTooLarge',
      'RetryBudgetExhausted',
      'PayloadConflict',
    ]);
    expect(orderFailure).toEqual({ CurrencyMismatch: 'CurrencyMismatch', VersionJump: 'VersionJump', AmountOutOfRange: 'AmountOutOfRange' });
    expect(shipmentFailure).toEqual({ CarrierRefused: 'CarrierRefused', ShipmentEscalated: 'ShipmentEscalated' });
  });
});
