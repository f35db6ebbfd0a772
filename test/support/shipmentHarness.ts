import { metrics } from '@opentelemetry/api';
import type { Container } from '@azure/cosmos';
import { CosmosDocumentStore } from '../../src/cosmos/index.js';
import { create } from '../../src/idempotency/index.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';
import { newOrderAcceptedOutbox, newOrderDocument } from '../../src/orders/documents.js';
import type { OrderPlaced } from '../../src/orders/index.js';
import type { OrderDocument } from '../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import type { MessageEnvelope } from '../../src/servicebus/index.js';
import { HttpCarrierClient, ShipmentConsumer } from '../../src/shipments/index.js';
import type { BookingAnswer, BookingRequest, CarrierClient, LookupAnswer, ShipmentContext } from '../../src/shipments/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../src/telemetry/index.js';
import type { CarrierStandIn } from '../../emulators/carrier-emulator/carrierStandIn.js';
import { newOrderId, orderPlaced } from './orderMessages.js';
import { testRetryStateKey } from './signedRetryState.js';

/** A clock the test moves: leases expire when the test says so, not when the machine is slow. */
export class TestClock {
  constructor(private epochMs = Date.parse('2026-12-01T10:00:00Z')) {}
  readonly now = (): Date => new Date(this.epochMs);
  advance(ms: number): void {
    this.epochMs += ms;
  }
}

/** One OrderAccepted delivery, built from the outbox entry the order's batch writes. */
export interface EventDelivery {
  readonly orderId: string;
  readonly envelope: MessageEnvelope;
  readonly body: unknown;
}

/** Stores an order (as processOrder would) and returns the event its outbox publishes. */
export async function storedOrderWithEvent(store: DocumentStore, now: Date): Promise<EventDelivery> {
  const orderId = newOrderId();
  const order = newOrderDocument(orderPlaced(orderId) as OrderPlaced, {
    messageId: orderId,
    dedupKey: orderId,
    fingerprint: 'test',
    processedAt: now.toISOString(),
  });
  const outbox = newOrderAcceptedOutbox(order, 'order-events');
  await store.commit(orderId, [create(order)]);
  const { message } = outbox;
  const envelope = envelopeFromTriggerMetadata({
    messageId: message.messageId,
    subject: message.subject,
    contentType: message.contentType,
    deliveryCount: 1,
    applicationProperties: message.applicationProperties,
  });
  return { orderId, envelope, body: message.body };
}

export function redelivered(delivery: EventDelivery, deliveryCount: number): EventDelivery {
  return { ...delivery, envelope: { ...delivery.envelope, deliveryCount } };
}

export async function orderOf(store: DocumentStore, orderId: string): Promise<OrderDocument | undefined> {
  return (await store.read<OrderDocument>(orderId, orderId))?.document;
}

/** The real client against the stand-in; its clock is a test clock (a fixed instant unless the test passes its own). */
export function httpCarrier(carrier: CarrierStandIn, timeoutMs = 5000, now: () => Date = new TestClock().now): HttpCarrierClient {
  return new HttpCarrierClient({ baseUrl: carrier.url, apiKey: carrier.apiKey, timeoutMs, now });
}

/** A consumer given no sleeper must never pause: a test that retries in the invocation passes one on its clock. */
const noSleeping = (ms: number): Promise<void> => Promise.reject(new Error(`the consumer paused ${ms} ms, but this test gave it no sleeper`));

export function shipmentConsumer(
  ctx: Omit<ShipmentContext, 'maxConcurrencyAttempts'> & Partial<Pick<ShipmentContext, 'maxConcurrencyAttempts'>>,
  extra: Partial<ConstructorParameters<typeof ShipmentConsumer>[0]> = {},
): ShipmentConsumer {
  return new ShipmentConsumer({
    maxConcurrencyAttempts: 10,
    consumerName: 'fulfilment',
    maxMessageBytes: 256 * 1024,
    markerTtlSeconds: 3600,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('test')), undefined, 'shipment-message'),
    sleep: noSleeping,
    retryStateKey: testRetryStateKey,
    ...ctx,
    ...extra,
  });
}

export function cosmosStore(container: Container): CosmosDocumentStore {
  return new CosmosDocumentStore(container);
}

/** A gate a test opens when it chooses: a call waits at it, so an interleaving is set, not hoped for. */
export class Gate {
  private release!: () => void;
  private arrived!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  private readonly reachedPromise = new Promise<void>((resolve) => (this.arrived = resolve));
  /** Resolves once a caller is waiting at the gate; fails fast when none comes (a broken flow never calls). */
  reached(withinMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`nothing reached the gate within ${withinMs} ms`)), withinMs)));
    return Promise.race([this.reachedPromise, late]).finally(() => clearTimeout(timer));
  }
  async pass(): Promise<void> {
    this.arrived();
    await this.opened;
  }
  open(): void {
    this.release();
  }
}

/** The real carrier client, with gates before a booking call starts or before its answer is handed back. */
export class GatedCarrier implements CarrierClient {
  beforeBook?: Gate;
  beforeAnswer?: Gate;
  /** A look-up waits here before it asks the carrier (its caller's read of the record goes stale meanwhile). */
  beforeLookup?: Gate;
  /** Throws once instead of calling: plays a process killed at that point. */
  killBeforeBook = false;
  /** Told of the kill, so the store the same process uses dies with it. */
  onKill?: () => void;
  constructor(private readonly inner: CarrierClient) {}
  async book(request: BookingRequest): Promise<BookingAnswer> {
    const gate = this.beforeBook;
    this.beforeBook = undefined;
    await gate?.pass();
    if (this.killBeforeBook) {
      this.killBeforeBook = false;
      this.onKill?.();
      throw new ProcessKilled('before the carrier call');
    }
    const answer = await this.inner.book(request);
    const after = this.beforeAnswer;
    this.beforeAnswer = undefined;
    await after?.pass();
    return answer;
  }
  async lookup(key: string, traceparent?: string): Promise<LookupAnswer> {
    const gate = this.beforeLookup;
    this.beforeLookup = undefined;
    await gate?.pass();
    return this.inner.lookup(key, traceparent);
  }
}

export class ProcessKilled extends Error {
  override readonly name = 'ProcessKilled';
  constructor(where: string) {
    super(`the process was killed ${where}`);
  }
}

/** The real store, with crash points and interleavings a test sets. */
export class ScriptedStore implements DocumentStore {
  /** The next commit that writes a shipment record in this state throws instead (the process dies before it). */
  killBeforeCommitOf?: string;
  /** The next read of a document with this id waits at the gate after reading (its result goes stale meanwhile). */
  holdAfterRead?: { readonly id: string; readonly gate: Gate; readonly times: number };
  private held = 0;
  /** Once killed, the process writes nothing more: every later call fails. */
  private dead = false;
  constructor(private readonly inner: DocumentStore) {}
  kill(): void {
    this.dead = true;
  }
  async read<D extends StoredDocument>(pk: string, id: string): Promise<VersionedDocument<D> | undefined> {
    if (this.dead) throw new ProcessKilled('earlier');
    const result = await this.inner.read<D>(pk, id);
    const hold = this.holdAfterRead;
    if (hold && hold.id === id && this.held < hold.times) {
      this.held += 1;
      await hold.gate.pass();
    }
    return result;
  }
  commit(pk: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (this.dead) return Promise.reject(new ProcessKilled('earlier'));
    const state = this.killBeforeCommitOf;
    if (
      state &&
      operations.some(
        (op) => (op.document as { docType?: string; state?: string }).docType === 'shipment' && (op.document as { state?: string }).state === state,
      )
    ) {
      this.killBeforeCommitOf = undefined;
      this.dead = true;
      return Promise.reject(new ProcessKilled(`before the ${state} record was written`));
    }
    return this.inner.commit(pk, operations);
  }
  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    if (this.dead) return Promise.reject(new ProcessKilled('earlier'));
    return this.inner.find<D>(query);
  }
}
