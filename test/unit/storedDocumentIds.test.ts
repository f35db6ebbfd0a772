import { describe, expect, it } from 'vitest';
import { intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId } from '../../src/intake/index.js';
import { conflictDocumentId, inboxMarkerId, orderDocumentId, outboxDocumentId, parkingLotId, rejectionDocumentId } from '../../src/orders/index.js';

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
      intakeKey: 'intake-key|k-1',
      intakeClaim: 'intake|o-1',
      intakeOutbox: 'outbox|OrderPlaced|o-1',
    });
  });
});
