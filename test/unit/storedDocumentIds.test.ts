import { describe, expect, it } from 'vitest';
import { intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId } from '../../src/intake/index.js';
import {
  conflictDocumentId,
  inboxMarkerId,
  orderDocumentId,
  outboxDocumentId,
  parkedItemId,
  parkingLotId,
  rejectionDocumentId,
} from '../../src/orders/index.js';
import type { ParsedOrderMessage } from '../../src/orders/index.js';
import { shipmentRecordId } from '../../src/shipments/index.js';

// Stored data is found again by these ids after every deployment: a change to one would make
// the records already in Cosmos DB invisible (a payment counted again, a key reused). Pinned here.
describe('the ids stored documents are found by', () => {
  it('are the ones every release has written', () => {
    expect({
      order: orderDocumentId('o-1'),
      inbox: inboxMarkerId('pay-1'),
      conflict: conflictDocumentId('k-1', 'f1'),
      rejection: rejectionDocumentId('m-1'),
      rejectionOfConsumer: rejectionDocumentId('m-1', 'billing'),
      outbox: outboxDocumentId('o-1'),
      parkingLot: parkingLotId('o-1'),
      parkedStatus: parkedItemId({
        type: 'OrderStatusChanged',
        payload: { orderId: 'o-1', version: 3 },
        key: { value: 'st-1' },
      } as unknown as ParsedOrderMessage),
      parkedPayment: parkedItemId({ type: 'PaymentReceived', payload: { orderId: 'o-1' }, key: { value: 'pay-1' } } as unknown as ParsedOrderMessage),
      shipment: shipmentRecordId('src|evt-1'),
      intakeKey: intakeKeyRecordId('k-1'),
      intakeClaim: orderIntakeClaimId('o-1'),
      intakeOutbox: orderPlacedOutboxId('o-1'),
    }).toEqual({
      order: 'o-1',
      inbox: 'inbox|pay-1',
      conflict: 'conflict|k-1|f1',
      rejection: 'rejection|m-1',
      rejectionOfConsumer: 'rejection|billing|m-1',
      outbox: 'outbox|OrderAccepted|o-1',
      parkingLot: 'parking-lot|o-1',
      parkedStatus: 'parked|status|3',
      parkedPayment: 'parked|payment|pay-1',
      shipment: 'shipment|src%7Cevt-1',
      intakeKey: 'intake-key|k-1',
      intakeClaim: 'intake|o-1',
      intakeOutbox: 'outbox|OrderPlaced|o-1',
    });
  });
});
