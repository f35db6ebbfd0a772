/** What the shipment flow needs from a carrier: book under an idempotency key, and ask what became of one. */
export interface CarrierClient {
  book(request: BookingRequest): Promise<BookingAnswer>;
  /** What the carrier holds under this key: what a reconciler asks before it calls again. */
  lookup(idempotencyKey: string, traceparent?: string): Promise<LookupAnswer>;
}

export interface ShipmentRequest {
  readonly orderReference: string;
  readonly customerId: string;
  readonly declaredValue: number;
  readonly currency: string;
}

export interface BookingRequest {
  readonly idempotencyKey: string;
  readonly shipment: ShipmentRequest;
  /** W3C trace context of the call, so the carrier's logs join the order's trace. */
  readonly traceparent?: string;
}

/** The carrier's answer, kept on the shipment record as it came. */
export interface CarrierAnswer {
  readonly status: number;
  readonly body: unknown;
}

export type BookingAnswer =
  | { readonly kind: 'booked'; readonly shipmentId: string; readonly answer: CarrierAnswer }
  /** A 4xx the carrier means: this shipment will not be booked as asked, now or later. */
  | { readonly kind: 'refused'; readonly answer: CarrierAnswer; readonly reason: string };

export type LookupAnswer =
  | BookingAnswer
  /** The carrier never booked under this key: calling again with it is safe. */
  | { readonly kind: 'not-found' }
  /** A request under this key is being handled right now: its outcome is not known yet. */
  | { readonly kind: 'in-flight' };

/**
 * No answer that settles the call: 5xx, 429, a timeout, a dropped connection, a refused credential.
 * The booking may or may not exist, so the record stays in progress and the key is reused.
 */
export class CarrierUnavailableError extends Error {
  override readonly name = 'CarrierUnavailableError';
  constructor(
    message: string,
    readonly status?: number,
    /** From Retry-After, when the carrier said when to come back. */
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
