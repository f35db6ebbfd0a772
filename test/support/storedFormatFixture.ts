import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One scenario's stored formats, as a release of the code wrote them (test/fixtures/stored-formats/<version>/):
 * the documents it left in the store, every message it delivered, derived or published, the carrier's
 * bookings, and what that release answered when each message came again. A later release must read
 * them: redeliveries stay duplicates (never a conflict, never a second effect).
 */
export interface StoredFormatFixture {
  /** The folder the file is in: `v1`, `v2`... Old folders are frozen, never regenerated. */
  readonly version: string;
  readonly scenario: string;
  readonly description: string;
  /** The fixed clock when the documents were captured; every replay runs at this instant. */
  readonly replayAt: string;
  readonly documents: readonly FixtureDocument[];
  /** Bookings the carrier holds under their Idempotency-Key when the documents were captured. */
  readonly carrierBookings: readonly CarrierBooking[];
  readonly deliveries: readonly FixtureDelivery[];
  readonly requests: readonly FixtureRequest[];
  /** What the outbox publisher sends when the change feed offers every outbox entry of the fixture again. */
  readonly publish: PublishAnswer;
  /** What the shipment reconciler does with the fixture's records at `replayAt`. */
  readonly reconcile: ReconcileAnswer;
}

export interface FixtureDocument {
  readonly partitionKey: string;
  readonly document: Readonly<Record<string, unknown>>;
}

export interface CarrierBooking {
  readonly idempotencyKey: string;
  readonly shipmentId: string;
  readonly answer: { readonly status: number; readonly body: unknown };
}

/** How a message came to exist: the producer's, a copy our code derived, or one the outbox sent. */
export type DeliveryOrigin = 'original' | 'producer-retry' | 'delayed-retry-copy' | 'resubmit-copy' | 'outbox-publish' | 'not-yet-delivered';

/** One message as the Functions host hands it to the handler: trigger metadata (camelCased) and the body (JSON parsed). */
export interface FixtureDelivery {
  readonly name: string;
  /** `orders`: processOrder; `fulfilment`: requestShipment. */
  readonly consumer: 'orders' | 'fulfilment';
  readonly origin: DeliveryOrigin;
  /** The invocation's trace context (`context.traceContext.traceParent`). */
  readonly traceparent: string;
  readonly triggerMetadata: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  /** What the release that wrote the fixture answered when this message came (again) at `replayAt`. */
  readonly answered: DeliveryAnswer;
}

export interface StoreChanges {
  /** `<partitionKey>/<id>` of each document created, changed or gone, sorted. */
  readonly created: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  /** A few fields that carry effects (state, amounts, versions, shipment id), of each document created or changed. */
  readonly effects: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export interface CarrierCalls {
  readonly book: number;
  readonly lookup: number;
}

export interface DeliveryAnswer {
  readonly outcome: string;
  readonly store: StoreChanges;
  readonly carrier: CarrierCalls;
  /** For a message that was not yet delivered: every other delivery of the fixture, once it is applied. */
  readonly thenRedelivered?: Readonly<Record<string, string>>;
}

/** An HTTP request to the intake: headers and body text as the client sent them, and the first answer. */
export interface FixtureRequest {
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly firstResponse: FixtureResponse;
  /** What the release answered to the same request again at `replayAt`. */
  readonly answered: { readonly response: FixtureResponse; readonly store: StoreChanges };
}

export interface FixtureResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface PublishAnswer {
  /** Each message sent, by destination, as handed to the Service Bus SDK. */
  readonly sent: readonly { readonly destination: string; readonly message: Readonly<Record<string, unknown>> }[];
  readonly store: StoreChanges;
}

export interface ReconcileAnswer {
  readonly examined: number;
  readonly items: readonly { readonly id: string; readonly orderId: string; readonly result: string; readonly shipmentId?: string }[];
  readonly store: StoreChanges;
  readonly carrier: CarrierCalls;
}

export const storedFormatsRoot = join(__dirname, '..', 'fixtures', 'stored-formats');

/** Every fixture of every version folder (`v1`, `v2`...), oldest version first: a new folder is picked up as it is. */
export function loadStoredFormatFixtures(root = storedFormatsRoot): StoredFormatFixture[] {
  const versions = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^v\d+$/.test(entry.name))
    .map((entry) => entry.name)
    .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  return versions.flatMap((version) =>
    readdirSync(join(root, version))
      .filter((file) => file.endsWith('.json'))
      .sort()
      .map((file) => {
        const fixture = JSON.parse(readFileSync(join(root, version, file), 'utf8')) as StoredFormatFixture;
        if (fixture.version !== version) throw new Error(`${version}/${file} says it is version ${fixture.version}`);
        return fixture;
      }),
  );
}
