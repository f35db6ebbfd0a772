import type { ServiceBusClient, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import { traceKey } from '../../../src/cli/traceCommand.js';
import type { TraceConnections } from '../../../src/cli/traceCommand.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import { fakeDeadLetterQueue } from '../../support/fakeDeadLetterQueue.js';

// `trace` answers within --timeout: a store or a broker that never answers (its SDK retrying on and on)
// is given up on when the tool's sleeper says the time is up, and the trace prints what it has.
const now = Date.parse('2026-12-04T12:00:00Z');

/** The tool's sleeper, under the test's hand: nothing wakes until `wakeAll`. */
function heldSleeper() {
  const sleeps: { ms: number; wake: () => void }[] = [];
  return {
    sleep: (ms: number) => new Promise<void>((wake) => sleeps.push({ ms, wake })),
    asked: () => sleeps.map((s) => s.ms),
    wakeAll: () => sleeps.splice(0).forEach((s) => s.wake()),
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

function brokerWith(receiverOf: () => ServiceBusReceiver) {
  return () => ({ createReceiver: receiverOf, close: async () => undefined }) as unknown as ServiceBusClient;
}

function connections(store: DocumentStore, serviceBus: () => ServiceBusClient, sleep: (ms: number) => Promise<void>): TraceConnections {
  return {
    entities: () => [{ queue: 'orders' }],
    serviceBus,
    store: async (run) => run({ store, now: () => now }),
    env: {},
    timeoutMs: 10_000,
    sleep,
  };
}

const deadLetter = () =>
  fakeDeadLetterQueue([
    { sequenceNumber: Long.fromNumber(3), messageId: 'pay-1', subject: 'PaymentReceived', body: { orderId: 'o-1' }, enqueuedTimeUtc: new Date(now - 1000) },
  ]).receiver;

describe('trace within --timeout', () => {
  it('gives up on a store that never answers after --timeout, keeps the broker messages, and says what is missing', async () => {
    const sleeper = heldSleeper();
    let asked = 0;
    const silent = Object.assign(new InMemoryDocumentStore(), {
      find: () => {
        asked += 1;
        return new Promise<never>(() => undefined);
      },
    });
    const running = traceKey(connections(silent, brokerWith(deadLetter), sleeper.sleep), 'pay-1');
    for (let i = 0; i < 5 && asked === 0; i += 1) await turn();
    expect(asked).toBe(1);
    expect(sleeper.asked()).toContain(10_000);
    sleeper.wakeAll();
    const report = await running;
    expect(report.events.map((e) => e.where)).toContain('orders/$deadletterqueue');
    expect(report.warnings).toEqual([expect.stringMatching(/^no answer from Cosmos DB within 10s: the stored records are not \(all\) in this trace/)]);
    expect(report.timedOut).toEqual(['Cosmos DB']);
    // Once it did not answer, the trace asks it nothing more.
    expect(asked).toBe(1);
  }, 2_000);

  it('gives up on a broker that never answers after --timeout, reads no further entity, and keeps the stored records', async () => {
    const sleeper = heldSleeper();
    const store = new InMemoryDocumentStore();
    await store.commit('o-1', [{ kind: 'create', document: { id: 'o-1', orderId: 'o-1', docType: 'order', createdAt: new Date(now).toISOString() } }] as never);
    let peeks = 0;
    const silentReceiver = () =>
      ({
        peekMessages: () => {
          peeks += 1;
          return new Promise<never>(() => undefined);
        },
        close: () => new Promise<never>(() => undefined),
      }) as unknown as ServiceBusReceiver;
    const running = traceKey(connections(store, brokerWith(silentReceiver), sleeper.sleep), 'o-1');
    for (let i = 0; i < 5 && peeks === 0; i += 1) await turn();
    sleeper.wakeAll();
    for (let i = 0; i < 5; i += 1) await turn();
    sleeper.wakeAll();
    const report = await running;
    expect(peeks).toBe(1);
    expect(report.events.map((e) => e.where)).toContain('cosmos order');
    expect(report.warnings).toContainEqual(
      expect.stringMatching(/^no answer from Service Bus within 10s: the broker's messages are not \(all\) in this trace/),
    );
    expect(report.timedOut).toEqual(['Service Bus']);
  }, 2_000);
});
