import type { CosmosClient } from '@azure/cosmos';
import { metrics } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CosmosDocumentStore } from '../../src/cosmos/index.js';
import { TransientStoreError } from '../../src/idempotency/index.js';
import type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from '../../src/idempotency/index.js';
import { OrderConsumer, rejectedMessagesPartition, rejectionDocumentId } from '../../src/orders/index.js';
import { envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import type { RetryScheduler, ScheduledCopy } from '../../src/servicebus/index.js';
import { OutcomeMetrics, OutcomeTelemetry } from '../../src/telemetry/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { RecordingLog } from '../support/recordingLog.js';
import { keyedCopyId, signedRetryProperties, testRetryStateKey } from '../support/signedRetryState.js';

/** Fails the next `failures` store calls as an unavailable account would (deterministic, no timing). */
class FlakyStore implements DocumentStore {
  failures = 0;
  calls = 0;
  constructor(private readonly inner: DocumentStore) {}
  read<D extends StoredDocument>(pk: string, id: string): Promise<VersionedDocument<D> | undefined> {
    return this.fail() ?? this.inner.read<D>(pk, id);
  }
  commit(pk: string, ops: readonly WriteOperation[]): Promise<CommitResult> {
    return this.fail() ?? this.inner.commit(pk, ops);
  }
  find<D extends StoredDocument>(query: DocumentQuery): Promise<VersionedDocument<D>[]> {
    return this.fail() ?? this.inner.find<D>(query);
  }
  private fail(): Promise<never> | undefined {
    this.calls += 1;
    if (this.failures <= 0) return undefined;
    this.failures -= 1;
    return Promise.reject(new TransientStoreError('503 from the injected outage', 503));
  }
}

/** Our own port (not an SDK): records what the consumer schedules, or refuses it. */
class RecordingScheduler implements RetryScheduler {
  readonly scheduled: { copy: ScheduledCopy; enqueueAt: Date }[] = [];
  refuse = false;
  async schedule(copy: ScheduledCopy, enqueueAt: Date): Promise<void> {
    if (this.refuse) throw new Error('the namespace is unreachable');
    this.scheduled.push({ copy, enqueueAt });
  }
  async close(): Promise<void> {}
}

const policy = { inInvocationMs: 10_000, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };
let client: CosmosClient;
let store: FlakyStore;
let scheduler: RecordingScheduler;
let clockMs: number;
let pauses: number[];
let consumer: OrderConsumer;

beforeAll(async () => {
  client = testCosmosClient();
  store = new FlakyStore(new CosmosDocumentStore(await createOrdersContainer(client)));
  scheduler = new RecordingScheduler();
  consumer = new OrderConsumer({
    store,
    now: () => new Date(clockMs),
    // The pause advances the consumer's clock: the in-invocation budget is spent without waiting.
    sleep: async (ms) => {
      pauses.push(ms);
      clockMs += ms;
    },
    markerTtlSeconds: 3600,
    orderEventsDestination: 'order-events',
    maxMessageBytes: 262_144,
    maxConcurrencyAttempts: 10,
    retry: policy,
    scheduler,
    retryStateKey: testRetryStateKey,
    telemetry: new OutcomeTelemetry(new OutcomeMetrics(metrics.getMeter('test'))),
  });
});
afterAll(() => client.dispose());

function reset() {
  clockMs = Date.parse('2026-12-01T10:00:00Z');
  pauses = [];
  store.failures = 0;
  scheduler.scheduled.splice(0);
  scheduler.refuse = false;
}

const envelope = (meta: Record<string, unknown>) => envelopeFromTriggerMetadata({ deliveryCount: 1, sequenceNumber: 1, ...meta });
const consume = (meta: Record<string, unknown>, body: unknown) => consumer.consume(envelope(meta), body, new RecordingLog());

describe('the in-invocation layer', () => {
  it('absorbs a short outage within one delivery: the message is created, nothing is scheduled', async () => {
    reset();
    const orderId = newOrderId();
    store.failures = 3;
    const result = await consume({ messageId: `m-${orderId}`, subject: 'OrderPlaced' }, orderPlaced(orderId));
    expect(result.outcome.kind).toBe('created');
    expect(pauses).toHaveLength(3);
    expect(pauses.every((ms) => ms >= 1 && ms <= 2_000)).toBe(true);
    expect(scheduler.scheduled).toEqual([]);
  });
});

describe('the delayed layer', () => {
  it('schedules a copy when the outage outlasts the in-invocation budget: deterministic MessageId, the dedup key kept, the round counted', async () => {
    reset();
    const orderId = newOrderId();
    store.failures = 1_000;
    const result = await consume(
      { messageId: `m-${orderId}`, subject: 'OrderPlaced', correlationId: 'c-1', contentType: 'application/json', applicationProperties: { tenant: 't1' } },
      orderPlaced(orderId),
    );
    expect(result.outcome).toMatchObject({ kind: 'rescheduled', attempt: 1, copyMessageId: expect.stringMatching(keyedCopyId(1)) });
    expect(pauses.reduce((a, b) => a + b, 0)).toBe(policy.inInvocationMs);
    expect(scheduler.scheduled).toHaveLength(1);
    const [{ copy, enqueueAt }] = scheduler.scheduled as [{ copy: ScheduledCopy; enqueueAt: Date }];
    expect(copy).toMatchObject({
      messageId: (result.outcome as { copyMessageId: string }).copyMessageId,
      subject: 'OrderPlaced',
      correlationId: 'c-1',
      contentType: 'application/json',
    });
    expect(copy.applicationProperties).toMatchObject({
      tenant: 't1',
      'idempotency-key': `m-${orderId}`,
      'retry-attempt': 1,
      'retry-first-failure-at': '2026-12-01T10:00:00.000Z',
      'retry-of': `m-${orderId}`,
      'retry-last-error': expect.stringContaining('503 from the injected outage'),
      'retry-signature': expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(JSON.parse(String(copy.body))).toEqual(orderPlaced(orderId));
    expect(enqueueAt.toISOString()).toBe('2026-12-01T10:00:40.000Z'); // 10 s in invocation, then 30 s
  });

  it('numbers the next round from the copy it received, keeps the first failure time, and doubles the delay', async () => {
    reset();
    const orderId = newOrderId();
    store.failures = 1_000;
    const props = signedRetryProperties('copy-2', { dedupKey: `m-${orderId}`, attempt: 2, firstFailureAt: '2026-12-01T09:00:00.000Z', root: `m-${orderId}` });
    const result = await consume({ messageId: 'copy-2', subject: 'OrderPlaced', applicationProperties: props }, orderPlaced(orderId));
    expect(result.outcome).toMatchObject({ kind: 'rescheduled', attempt: 3, copyMessageId: expect.stringMatching(keyedCopyId(3)) });
    expect(scheduler.scheduled[0]?.copy.applicationProperties).toMatchObject({
      'retry-first-failure-at': '2026-12-01T09:00:00.000Z',
      'retry-attempt': 3,
      'idempotency-key': `m-${orderId}`,
    });
    expect(scheduler.scheduled[0]?.enqueueAt.toISOString()).toBe('2026-12-01T10:02:10.000Z'); // 10 s, then 120 s
  });

  it('applies the copy exactly once when the outage is over, and absorbs the original if it comes back too', async () => {
    reset();
    const orderId = newOrderId();
    const payment = paymentReceived(orderId, { amount: 5 });
    await consume({ messageId: `m-${orderId}`, subject: 'OrderPlaced' }, orderPlaced(orderId));
    store.failures = 1_000;
    await consume({ messageId: `p-${orderId}`, subject: 'PaymentReceived' }, payment);
    const { copy } = scheduler.scheduled[0] as { copy: ScheduledCopy };
    store.failures = 0;
    const applied = await consume(
      { messageId: copy.messageId, subject: copy.subject, applicationProperties: copy.applicationProperties },
      JSON.parse(String(copy.body)),
    );
    expect(applied.outcome.kind).toBe('created');
    // A crash between the scheduling and the completion: the original is delivered again.
    const original = await consume({ messageId: `p-${orderId}`, subject: 'PaymentReceived', deliveryCount: 2 }, payment);
    expect(original.outcome.kind).toBe('duplicate');
    expect((await store.read<{ id: string; amountPaid: number }>(orderId, orderId))?.document.amountPaid).toBe(5);
  });

  it('takes the dead-letter path with RetryBudgetExhausted and the last error once the budget is spent', async () => {
    reset();
    const orderId = newOrderId();
    store.failures = 1_000;
    const props = signedRetryProperties(`m-${orderId}~retry-40`, {
      dedupKey: `m-${orderId}`,
      attempt: 40,
      firstFailureAt: '2026-11-30T10:00:00.000Z',
      root: `m-${orderId}`,
    });
    const result = await consume({ messageId: `m-${orderId}~retry-40`, subject: 'OrderPlaced', applicationProperties: props }, orderPlaced(orderId));
    expect(result.outcome).toMatchObject({ kind: 'retry' }); // the outage also keeps the rejection record from being written
    store.failures = 0;
    expect(scheduler.scheduled).toEqual([]);
    reset();
    clockMs = Date.parse('2026-12-01T10:00:00Z');
    const flaky = new FlakyStoreOnOrderOnly(store);
    const exhausted = await flaky.consumeWithOrderFailing(() =>
      consume({ messageId: `m-${orderId}~retry-40`, subject: 'OrderPlaced', applicationProperties: props }, orderPlaced(orderId)),
    );
    expect(exhausted.outcome).toMatchObject({ kind: 'invalid', error: { code: 'RetryBudgetExhausted' } });
    const description = (exhausted.outcome as { error: Error }).error.message;
    expect(description).toMatch(/gave up after 40 delayed retries since 2026-11-30T10:00:00\.000Z; .*; last error: TransientStoreError/);
    // A retry after a store timeout may follow a write that committed: never "still failing", which says nothing was written.
    expect(description).toContain('the effect may have been written');
    expect(description).not.toContain('still failing');
    const rejection = await store.read<{ id: string; reason: string }>(
      rejectedMessagesPartition(`m-${orderId}~retry-40`),
      rejectionDocumentId(`m-${orderId}~retry-40`),
    );
    expect(rejection?.document.reason).toBe('RetryBudgetExhausted');
  });

  it('retries an invalid message whose reason cannot be recorded, and the copy records it under its own MessageId', async () => {
    reset();
    store.failures = 1_000; // the outage also refuses the rejection record
    const result = await consume({ messageId: 'bad-json-1', subject: 'OrderPlaced' }, '{"orderId": ');
    expect(result.outcome).toMatchObject({ kind: 'rescheduled', copyMessageId: expect.stringMatching(keyedCopyId(1)) });
    const { copy } = scheduler.scheduled[0] as { copy: ScheduledCopy };
    store.failures = 0;
    const again = await consume({ messageId: copy.messageId, subject: copy.subject, applicationProperties: copy.applicationProperties }, copy.body);
    expect(again.outcome).toMatchObject({ kind: 'invalid', error: { code: 'InvalidJson' } });
    expect(
      (await store.read<{ id: string; reason: string }>(rejectedMessagesPartition(String(copy.messageId)), rejectionDocumentId(copy.messageId)))?.document
        .reason,
    ).toBe('InvalidJson');
  });

  it('hands the message back to Service Bus when the copy cannot be scheduled, saying why', async () => {
    reset();
    const orderId = newOrderId();
    store.failures = 1_000;
    scheduler.refuse = true;
    const result = await consume({ messageId: `m-${orderId}`, subject: 'OrderPlaced' }, orderPlaced(orderId));
    expect(result.outcome).toMatchObject({ kind: 'retry', reason: expect.stringContaining('scheduling a delayed retry failed: the namespace is unreachable') });
  });
});

/** Fails only the order's partition, so the rejection record in #rejected-<n> can be written. */
class FlakyStoreOnOrderOnly {
  constructor(private readonly flaky: FlakyStore) {}
  async consumeWithOrderFailing<T>(run: () => Promise<T>): Promise<T> {
    const original = { read: this.flaky.read.bind(this.flaky), commit: this.flaky.commit.bind(this.flaky) };
    const unavailable = () => Promise.reject(new TransientStoreError('503 from the injected outage', 503));
    this.flaky.read = ((pk: string, id: string) => (pk.startsWith('#rejected-') ? original.read(pk, id) : unavailable())) as FlakyStore['read'];
    this.flaky.commit = ((pk: string, ops: readonly WriteOperation[]) =>
      pk.startsWith('#rejected-') ? original.commit(pk, ops) : unavailable()) as FlakyStore['commit'];
    try {
      return await run();
    } finally {
      this.flaky.read = original.read;
      this.flaky.commit = original.commit;
    }
  }
}
