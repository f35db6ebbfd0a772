import { metrics } from '@opentelemetry/api';
import { loadSettings } from '../../src/config.js';
import type { Settings } from '../../src/config.js';
import { createOrderIntake } from '../../src/intake/index.js';
import type { IntakeHttpRequest, OrderIntake } from '../../src/intake/index.js';
import { OrderConsumer } from '../../src/orders/index.js';
import { createOutboxPublisher, toServiceBusMessage } from '../../src/outbox/index.js';
import type { EventSender, OutboxPublisher, SendOutcome } from '../../src/outbox/index.js';
import { envelopeFromInvocation } from '../../src/servicebus/index.js';
import type { RetryScheduler } from '../../src/servicebus/index.js';
import { createShipmentConsumer, createShipmentReconciler } from '../../src/shipments/index.js';
import type { ShipmentConsumer, ShipmentReconciler } from '../../src/shipments/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../src/telemetry/index.js';
import type { LogSink } from '../../src/telemetry/index.js';
import type {
  DeliveryAnswer,
  FixtureDelivery,
  FixtureRequest,
  FixtureResponse,
  PublishAnswer,
  ReconcileAnswer,
  StoredFormatFixture,
} from './storedFormatFixture.js';
import { FixtureStore, KeyedCarrier, storeChanges } from './storedFormatStore.js';

/**
 * The settings every stored-formats run uses: the defaults a deployment gets, no Service Bus or
 * Cosmos connection ever opened (the stores and senders are given), retries handed back at once.
 */
/** The retry state signing key of a capture: fixed, so a capture's copies are the same from one run to the next. */
export const fixtureRetryStateKey = 'stored-formats-capture-key';

export function fixtureSettings(): Readonly<Settings> {
  return loadSettings({
    ServiceBusConnection: 'Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true',
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    COSMOS_KEY: 'c3RvcmVkLWZvcm1hdHM=',
    CARRIER_API_URL: 'http://127.0.0.1:9/',
    TRANSIENT_RETRY_IN_INVOCATION_MS: '0',
    DELAYED_RETRY_ENABLED: 'false',
  });
}

/** Keeps what the publisher hands to Service Bus, and answers that the broker accepted it. */
export class RecordingSender implements EventSender {
  readonly sent: { destination: string; message: Record<string, unknown> }[] = [];
  async send(destination: string, messages: readonly Parameters<EventSender['send']>[1][number][]): Promise<readonly SendOutcome[]> {
    for (const message of messages) this.sent.push({ destination, message: { ...toServiceBusMessage(message) } });
    return messages.map(() => ({ kind: 'sent' }));
  }
  async close(): Promise<void> {}
}

export const quietLog: LogSink = { info: () => undefined, warn: () => undefined, error: () => undefined };

export interface FixtureFlows {
  readonly store: FixtureStore;
  readonly carrier: KeyedCarrier;
  readonly sender: RecordingSender;
  readonly orders: OrderConsumer;
  readonly fulfilment: ShipmentConsumer;
  readonly intake: OrderIntake;
  readonly publisher: OutboxPublisher;
  readonly reconciler: ShipmentReconciler;
}

/** Every flow of the app over one store, one carrier and one clock, built as the composition roots build them. */
export function flowsOver(store: FixtureStore, carrier: KeyedCarrier, now: () => Date, scheduler?: RetryScheduler): FixtureFlows {
  const settings = fixtureSettings();
  const meter = metrics.getMeter('stored-formats');
  const sender = new RecordingSender();
  const orders = new OrderConsumer({
    store,
    now,
    consumerName: settings.consumerName,
    markerTtlSeconds: settings.markerTtlSeconds,
    orderEventsDestination: settings.outbox.orderEventsTopicName,
    maxMessageBytes: settings.maxMessageBytes,
    maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
    retry: settings.retry,
    scheduler,
    // A capture's delayed retries are signed as a deployment signs them; without a key the consumer falls back to redelivery.
    ...(scheduler === undefined ? {} : { retryStateKey: fixtureRetryStateKey }),
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(meter)),
  });
  return {
    store,
    carrier,
    sender,
    orders,
    fulfilment: createShipmentConsumer(settings, { store, carrier, now, meter }),
    intake: createOrderIntake(settings, { store, now, meter }),
    publisher: createOutboxPublisher(settings, { store, sender, now, meter }),
    reconciler: createShipmentReconciler(settings, { store, carrier, now, meter }),
  };
}

/** Hands a message to its consumer as the host would, with this delivery count. */
export async function deliver(flows: FixtureFlows, delivery: Omit<FixtureDelivery, 'answered'>, deliveryCount: number): Promise<string> {
  const triggerMetadata = { ...delivery.triggerMetadata, deliveryCount };
  const envelope = envelopeFromInvocation({ triggerMetadata, traceContext: { traceParent: delivery.traceparent } });
  if (delivery.consumer === 'orders') return (await flows.orders.consume(envelope, delivery.body, quietLog)).outcome.kind;
  const invocation = { invocationId: `${delivery.name} #${deliveryCount}`, traceparent: delivery.traceparent };
  return (await flows.fulfilment.consume(envelope, delivery.body, quietLog, invocation)).outcome.kind;
}

/** A message that was delivered comes again with its count one higher; one not yet delivered comes for the first time. */
export function nextDeliveryCount(delivery: Omit<FixtureDelivery, 'answered'>): number {
  const count = Number(delivery.triggerMetadata.deliveryCount ?? 1);
  return delivery.origin === 'not-yet-delivered' ? count : count + 1;
}

/** The fixture's store and carrier at `replayAt`, with every flow of the code that runs this. */
export async function flowsOnFixture(fixture: Pick<StoredFormatFixture, 'documents' | 'carrierBookings' | 'replayAt'>): Promise<FixtureFlows> {
  const at = Date.parse(fixture.replayAt);
  const store = await FixtureStore.holding(fixture.documents, () => at);
  return flowsOver(store, new KeyedCarrier(fixture.carrierBookings), () => new Date(at));
}

type FixtureState = Pick<StoredFormatFixture, 'documents' | 'carrierBookings' | 'replayAt'> & {
  readonly deliveries: readonly Omit<FixtureDelivery, 'answered'>[];
};

/** What the running code answers when this delivery comes (again) to the fixture's store. */
export async function answerDelivery(fixture: FixtureState, delivery: Omit<FixtureDelivery, 'answered'>): Promise<DeliveryAnswer> {
  const flows = await flowsOnFixture(fixture);
  const before = flows.store.documents();
  const outcome = await deliver(flows, delivery, nextDeliveryCount(delivery));
  const answer: DeliveryAnswer = { outcome, store: storeChanges(before, flows.store.documents()), carrier: { ...flows.carrier.calls } };
  if (delivery.origin !== 'not-yet-delivered') return answer;
  const thenRedelivered: Record<string, string> = {};
  for (const other of fixture.deliveries.filter((d) => d.name !== delivery.name))
    thenRedelivered[other.name] = await deliver(flows, other, nextDeliveryCount(other) + 1);
  return { ...answer, thenRedelivered };
}

/** What the intake answers to this request again. */
export async function answerRequest(fixture: FixtureState, request: Omit<FixtureRequest, 'answered'>): Promise<FixtureRequest['answered']> {
  const flows = await flowsOnFixture(fixture);
  const before = flows.store.documents();
  const response = await flows.intake.handle(httpRequest(request), { invocationId: `${request.name} (again)`, log: quietLog });
  return { response: plainResponse(response), store: storeChanges(before, flows.store.documents()) };
}

/** What the outbox publisher sends when the change feed hands it every outbox entry again (a lease taken over, say). */
export async function answerPublish(fixture: FixtureState): Promise<PublishAnswer> {
  const flows = await flowsOnFixture(fixture);
  const before = flows.store.documents();
  const fromFeed = [];
  for (const { partitionKey, document } of before.filter((d) => d.document.docType === 'outbox')) {
    const stored = await flows.store.read(partitionKey, String(document.id));
    if (stored) fromFeed.push({ ...(stored.document as unknown as Record<string, unknown>), _etag: stored.etag, _lsn: 1 });
  }
  await flows.publisher.publishChanges(fromFeed, quietLog);
  return { sent: flows.sender.sent, store: storeChanges(before, flows.store.documents()) };
}

/** What one run of the shipment reconciler does with the fixture's records. */
export async function answerReconcile(fixture: FixtureState): Promise<ReconcileAnswer> {
  const flows = await flowsOnFixture(fixture);
  const before = flows.store.documents();
  const result = await flows.reconciler.reconcile(quietLog);
  const items = result.items.map(({ id, orderId, result: kind, shipmentId }) => ({
    id,
    orderId,
    result: kind,
    ...(shipmentId === undefined ? {} : { shipmentId }),
  }));
  return { examined: result.examined, items, store: storeChanges(before, flows.store.documents()), carrier: { ...flows.carrier.calls } };
}

export function httpRequest(request: Pick<FixtureRequest, 'headers' | 'body'>): IntakeHttpRequest {
  const bytes = new TextEncoder().encode(request.body);
  return { headers: new Headers(request.headers), body: new Blob([bytes]).stream() };
}

export function plainResponse(response: FixtureResponse): FixtureResponse {
  return JSON.parse(JSON.stringify(response)) as FixtureResponse;
}
