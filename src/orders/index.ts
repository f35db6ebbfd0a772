export { createOrderConsumer } from './createOrderConsumer.js';
export { OrderConsumer } from './orderConsumer.js';
export { orderMessages } from './orderMessages.js';
export { createParkedItemSweeper } from './createParkedItemSweeper.js';
export type { ParkedItemSweeper } from './createParkedItemSweeper.js';
export { orderNeverArrived, sweepParkedItems } from './sweepParkedItems.js';
export type { SweepOptions, SweepResult } from './sweepParkedItems.js';
export { parkedItemId, parkingLotId } from './parkedItems.js';
export { isSameRequest } from './sameRequest.js';
export type { ParkedItemDocument, ParkedItemState, ParkingLotDocument } from './parkedItems.js';
export type { OrderConsumerOptions } from './orderConsumer.js';
// The pipeline's own, re-exported for the callers that knew them here (the operator tool, dev/, tests).
export {
  dedupKeyOf,
  findRejectionRecord,
  idempotencyKeyProperty,
  legacyRejectedMessagesPartition,
  rejectedMessagesPartition,
  rejectionDocumentId,
  retryProperties,
  throwUnlessCompletable,
} from '../consumer/index.js';
export type { ConsumeResult, RejectionDocument } from '../consumer/index.js';
export { parseOrderMessage, resolveMessageType } from './parseOrderMessage.js';
export type { OrderMessage, ParsedOrderMessage, ParseOptions } from './parseOrderMessage.js';
export { conflictDocumentId, inboxMarkerId, orderDocumentId, outboxDocumentId, withShipment } from './documents.js';
export type { ConflictDocument, InboxMarkerDocument, OrderDocument } from './documents.js';
export { describeIssues, issuePaths, orderIdSchema, orderMessageTypes, orderPlacedSchema, orderStatuses } from './schemas.js';
export type { OrderMessageType, OrderPlaced, OrderStatus, OrderStatusChanged, PaymentReceived } from './schemas.js';
