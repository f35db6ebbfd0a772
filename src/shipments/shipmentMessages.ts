import { randomUUID } from 'node:crypto';
import type { ConsumerDefinition, InvocationInfo, MessageFacts } from '../consumer/index.js';
import { childTraceparent } from '../telemetry/index.js';
import { bookShipmentOnce, releaseLease } from './bookShipment.js';
import type { Caller, ShipmentContext } from './bookShipment.js';
import { parseReceivedShipmentEvent } from './orderAcceptedEvent.js';
import type { ShipmentEvent } from './orderAcceptedEvent.js';

/** The fulfilment subscription's consumer, as the pipeline runs it: one OrderAccepted event, one booking with the carrier. */
export function shipmentMessages(ctx: ShipmentContext & { readonly consumerName: string }): ConsumerDefinition<ShipmentEvent, Required<Caller>> {
  return {
    parse: parseReceivedShipmentEvent,
    factsOf: shipmentFacts,
    async handle(event, delivery) {
      const booking = await bookShipmentOnce(event, ctx, delivery.invocation);
      return { outcome: booking.outcome, facts: { shipmentId: booking.shipmentId } };
    },
    startInvocation: (invocation) => callerOf(ctx.consumerName, invocation),
    async afterHandBack(result, caller) {
      // Stryker disable next-line ConditionalExpression: a retry without an order id or key failed before the event was parsed, so there is no record whose lease could be ours
      if (result.orderId !== undefined && result.dedupKey !== undefined)
        await releaseLease(ctx, result.orderId, result.dedupKey, caller.owner).catch(leaseRunsOut);
    },
    // The event's order is named by the event, not looked up: a rejection is found by MessageId alone.
    rejectionRecords: 'message-only',
  };
}

function shipmentFacts(event: ShipmentEvent | undefined): MessageFacts {
  return { dedupKey: event?.key, orderId: event?.orderId, type: 'OrderAccepted' };
}

/**
 * One owner for the whole invocation, its in-invocation retries included: its own earlier call is
 * reconciled and repeated, where another owner's live lease is waited for.
 */
function callerOf(consumerName: string, invocation: InvocationInfo): Required<Caller> {
  return { owner: `${consumerName}/${invocation.invocationId ?? randomUUID()}`, traceparent: childTraceparent(invocation.traceparent) };
}

/** Releasing is best effort: a lease not released simply runs out. */
function leaseRunsOut(): void {}
