import type { MessageEnvelope } from '../servicebus/index.js';

/** What a remembered rejection answers a redelivery with. */
export interface RememberedRejection<R> {
  readonly result: R;
}

/** How many broker messages one consumer instance remembers, evicted oldest first. */
export const rejectedDeliveriesCapacity = 10_000;

/**
 * How much text (characters, as `weigh` counts them) the remembered rejections hold in all, evicted
 * oldest first: a few megabytes, whatever keys and reasons senders made them carry.
 */
export const rejectedDeliveriesMaxWeight = 2_000_000;

/**
 * The broker messages this instance rejected as unreadable (bad body, schema, key, type), by queue
 * sequence number. The trigger cannot dead-letter with a reason, so such a message comes back
 * `maxDeliveryCount` times: a flood's cost is mostly those redeliveries. The reason is a function of
 * the broker message alone (its body and properties never change between deliveries, and the
 * settings it was judged by are this process's), and its record is already written, so a redelivery
 * that this instance rejected is answered from here: no parse, no store call.
 *
 * Only the broker's own fields say it is the same message: the sequence number (assigned by the
 * entity, unique in it, never settable by a sender) with the delivery count above 1; the MessageId,
 * which a sender chooses, must match too. The host writes a JSON body's top-level properties over
 * the broker's fields, so the consumer forgets a sequence number or count the body names
 * (withoutFieldsTheBodyMayHaveWritten): such a message is never remembered. A resubmitted or
 * scheduled copy has a new sequence number, so it is judged afresh. What depends on stored state (a
 * conflict, a currency mismatch, a version jump, a spent retry budget) is never remembered: a later
 * delivery may find that state changed.
 */
export class RejectedDeliveries<R> {
  private readonly bySequenceNumber = new Map<number, { readonly messageId: string; readonly result: R; readonly weight: number }>();
  private heldWeight = 0;

  /** `weigh`: the characters a result holds (its MessageId is added); an entry heavier than `maxWeight` is not kept, and pushes nothing out. */
  constructor(
    private readonly capacity = rejectedDeliveriesCapacity,
    private readonly weigh: (result: R) => number = () => 0,
    private readonly maxWeight = rejectedDeliveriesMaxWeight,
  ) {}

  /** The remembered rejection of this very broker message, when this is one of its redeliveries. */
  recall(envelope: MessageEnvelope): RememberedRejection<R> | undefined {
    const { sequenceNumber, messageId, deliveryCount } = envelope;
    if (sequenceNumber === undefined || messageId === undefined || (deliveryCount ?? 1) <= 1) return undefined;
    const entry = this.bySequenceNumber.get(sequenceNumber);
    return entry?.messageId === messageId ? { result: entry.result } : undefined;
  }

  /** Called once the rejection's record is written: remembered until `capacity` newer ones push it out. */
  remember(envelope: MessageEnvelope, result: R): void {
    const { sequenceNumber, messageId } = envelope;
    if (sequenceNumber === undefined || messageId === undefined) return;
    this.forget(sequenceNumber);
    const weight = this.weigh(result) + messageId.length;
    // Too heavy to keep at all: it pushes nothing else out.
    if (weight > this.maxWeight) return;
    this.bySequenceNumber.set(sequenceNumber, { messageId, result, weight });
    this.heldWeight += weight;
    while (this.bySequenceNumber.size > this.capacity || this.heldWeight > this.maxWeight) {
      const oldest = this.bySequenceNumber.keys().next();
      if (oldest.done) break;
      this.forget(oldest.value);
    }
  }

  private forget(sequenceNumber: number): void {
    const entry = this.bySequenceNumber.get(sequenceNumber);
    if (entry === undefined) return;
    this.bySequenceNumber.delete(sequenceNumber);
    this.heldWeight -= entry.weight;
  }

  get size(): number {
    return this.bySequenceNumber.size;
  }

  /** The characters held in all, as `weigh` counted them. */
  get weight(): number {
    return this.heldWeight;
  }
}
