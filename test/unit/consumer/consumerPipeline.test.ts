import { describe, expect, it } from 'vitest';
import { CountingDocumentStore } from '../../../dev/store/countingDocumentStore.js';
import { ConsumerPipeline, contentOf, rejectedMessagesPartition, rejectionDocumentId } from '../../../src/consumer/index.js';
import type { ConsumeResult, ConsumerDefinition, Delivery, Handled, PipelineOptions, RejectionDocument } from '../../../src/consumer/index.js';
import { InMemoryDocumentStore, PermanentMessageError } from '../../../src/idempotency/index.js';
import type { DocumentStore, ProcessingOutcome } from '../../../src/idempotency/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';
import type { OutcomeReport } from '../../../src/telemetry/index.js';
import { RecordingLog } from '../../support/recordingLog.js';

// The pipeline with a definition of its own (a "note" message: `{ id, text }`): what the pipeline
// does for every consumer, whatever it parses and handles.
interface Note {
  readonly key: string;
  readonly id: string;
}

function noteDefinition(outcomes: (ProcessingOutcome | Error)[], rejectionRecords: 'name-the-order' | 'message-only' = 'message-only') {
  const calls = { parse: 0, handle: 0, startInvocation: 0, handedBack: [] as ConsumeResult[], deliveries: [] as Delivery<string>[] };
  const definition: ConsumerDefinition<Note, string> = {
    parse(message) {
      calls.parse += 1;
      const { payload } = contentOf(message);
      const id = (payload as { id?: unknown }).id;
      if (typeof id !== 'string') throw new PermanentMessageError('SchemaViolation', 'Note: id must be a string', message.envelope.messageId);
      return { key: `note|${message.envelope.messageId ?? ''}`, id };
    },
    factsOf: (note) => ({ dedupKey: note?.key, type: 'Note', orderId: note?.id }),
    handle(_note, delivery): Promise<Handled> {
      calls.handle += 1;
      calls.deliveries.push(delivery);
      const next = outcomes.shift() ?? { kind: 'created' };
      return next instanceof Error ? Promise.reject(next) : Promise.resolve({ outcome: next, facts: { shipmentId: 'learnt' } });
    },
    startInvocation: (invocation) => {
      calls.startInvocation += 1;
      return `owner-${invocation.invocationId ?? 'none'}`;
    },
    afterHandBack: (result) => {
      calls.handedBack.push(result);
      return Promise.resolve();
    },
    rejectionRecords,
  };
  return { definition, calls };
}

function raise(error: Error): never {
  throw error;
}

class ManualClock {
  constructor(public epochMs = Date.parse('2026-12-01T10:00:00Z')) {}
  readonly now = (): Date => new Date(this.epochMs);
  readonly sleep = (ms: number): Promise<void> => {
    this.epochMs += ms;
    return Promise.resolve();
  };
}

function pipelineOn(definition: ConsumerDefinition<Note, string>, store: DocumentStore, extra: Partial<PipelineOptions> = {}) {
  const reports: OutcomeReport[] = [];
  const clock = new ManualClock();
  const pipeline = new ConsumerPipeline(definition, {
    store,
    now: clock.now,
    sleep: clock.sleep,
    consumerName: 'notes',
    markerTtlSeconds: 3600,
    maxConcurrencyAttempts: 3,
    maxMessageBytes: 1024,
    telemetry: { report: (report) => reports.push(report) },
    ...extra,
  });
  return { pipeline, reports, clock };
}

const delivery = (messageId: string, deliveryCount = 1, sequenceNumber = 7) =>
  envelopeFromTriggerMetadata({ messageId, deliveryCount, sequenceNumber, subject: 'Note' });
const policy = { inInvocationMs: 10_000, firstDelayMs: 30_000, maxDelayMs: 900_000, budgetMs: 86_400_000 };

describe('ConsumerPipeline', () => {
  describe('a message that cannot be parsed', () => {
    it('is rejected: its record is written by MessageId before the outcome is reported, and nothing is handled', async () => {
      const store = new InMemoryDocumentStore();
      const { definition, calls } = noteDefinition([]);
      const { pipeline, reports } = pipelineOn(definition, store);
      const result = await pipeline.consume(delivery('bad-1'), { id: 42 }, new RecordingLog());
      expect(result).toMatchObject({ outcome: { kind: 'invalid', error: { code: 'SchemaViolation' } }, type: 'Note', dedupKey: 'bad-1' });
      expect(calls.handle).toBe(0);
      const record = await store.read<RejectionDocument>(rejectedMessagesPartition('bad-1'), rejectionDocumentId('bad-1', 'notes'));
      expect(record?.document).toMatchObject({ reason: 'SchemaViolation', messageType: 'Note' });
      expect(reports.map((r) => r.outcome.kind)).toEqual(['invalid']);
    });

    it("is a body that is not JSON: rejected with the entrance's reason, which the definition's parse only passes on", async () => {
      const store = new InMemoryDocumentStore();
      const { definition } = noteDefinition([]);
      const { pipeline } = pipelineOn(definition, store);
      const result = await pipeline.consume(delivery('bad-2'), 'not json', new RecordingLog());
      expect(result.outcome).toMatchObject({ kind: 'invalid', error: { code: 'InvalidJson' } });
    });

    it('is answered from memory on a redelivery of the same broker message: no parse, no store call, the same rejection', async () => {
      const store = new CountingDocumentStore(new InMemoryDocumentStore());
      const { definition, calls } = noteDefinition([]);
      const { pipeline, reports } = pipelineOn(definition, store);
      const first = await pipeline.consume(delivery('bad-3', 1, 41), { id: 42 }, new RecordingLog());
      store.reset();
      const again = await pipeline.consume(delivery('bad-3', 2, 41), { id: 42 }, new RecordingLog());
      expect([calls.parse, store.trips]).toEqual([1, 0]);
      expect(again.outcome).toMatchObject({ kind: 'invalid', error: { code: 'SchemaViolation' } });
      expect(again.dedupKey).toBe(first.dedupKey);
      expect(reports).toHaveLength(2);
    });

    it('is not remembered when its record could not be written: it is handed back, and its redelivery is parsed and recorded again', async () => {
      const inner = new InMemoryDocumentStore();
      let failing = true;
      const store: DocumentStore = Object.assign(Object.create(inner) as DocumentStore, {
        commit: (pk: string, ops: Parameters<DocumentStore['commit']>[1]) => (failing ? Promise.reject(new Error('store unavailable')) : inner.commit(pk, ops)),
      });
      const { definition, calls } = noteDefinition([]);
      const { pipeline } = pipelineOn(definition, store);
      const first = await pipeline.consume(delivery('bad-4', 1, 43), { id: 42 }, new RecordingLog());
      expect(first.outcome).toMatchObject({ kind: 'retry', reason: 'could not record rejection: Error: store unavailable' });
      expect(calls.handedBack).toHaveLength(1);
      failing = false;
      const again = await pipeline.consume(delivery('bad-4', 2, 43), { id: 42 }, new RecordingLog());
      expect(again.outcome.kind).toBe('invalid');
      expect(calls.parse).toBe(2);
    });
  });

  describe('a parse that fails for another reason than the message', () => {
    it('is a retry naming the error: nothing is recorded or remembered, and the redelivery is parsed again', async () => {
      const store = new CountingDocumentStore(new InMemoryDocumentStore());
      const { definition, calls } = noteDefinition([]);
      const failing: ConsumerDefinition<Note, string> = {
        ...definition,
        parse: (message) => (calls.parse === 0 ? (calls.parse++, raise(new TypeError('out of memory'))) : definition.parse(message)),
      };
      const { pipeline } = pipelineOn(failing, store);
      const first = await pipeline.consume(delivery('n-0', 1, 44), { id: 'a' }, new RecordingLog());
      expect(first).toMatchObject({ outcome: { kind: 'retry', reason: 'TypeError: out of memory' }, type: 'Note' });
      expect([store.commits, calls.handle]).toEqual([0, 0]);
      expect((await pipeline.consume(delivery('n-0', 2, 44), { id: 'a' }, new RecordingLog())).outcome.kind).toBe('created');
    });
  });

  describe('a transient failure', () => {
    it('is retried in the invocation on the injected clock, with the message parsed once and the invocation started once', async () => {
      const { definition, calls } = noteDefinition([
        { kind: 'retry', reason: 'store unavailable' },
        { kind: 'retry', reason: 'store unavailable' },
        { kind: 'created' },
      ]);
      const { pipeline } = pipelineOn(definition, new InMemoryDocumentStore(), { retry: policy });
      const result = await pipeline.consume(delivery('n-1'), { id: 'a' }, new RecordingLog(), { invocationId: 'i-1' });
      expect(result).toEqual({ outcome: { kind: 'created' }, dedupKey: 'note|n-1', type: 'Note', orderId: 'a', shipmentId: 'learnt' });
      expect([calls.parse, calls.handle, calls.startInvocation]).toEqual([1, 3, 1]);
      expect(calls.deliveries.map((d) => d.invocation)).toEqual(['owner-i-1', 'owner-i-1', 'owner-i-1']);
      expect(calls.handedBack).toEqual([]);
    });

    it('thrown by the handler is a retry naming the error, handed back (afterHandBack) when no retry layer is configured', async () => {
      const { definition, calls } = noteDefinition([new TypeError('socket hang up')]);
      const { pipeline } = pipelineOn(definition, new InMemoryDocumentStore());
      const result = await pipeline.consume(delivery('n-2'), { id: 'a' }, new RecordingLog());
      expect(result.outcome).toMatchObject({ kind: 'retry', reason: 'TypeError: socket hang up' });
      expect(result.dedupKey).toBe('note|n-2');
      expect(calls.handedBack.map((r) => r.outcome.kind)).toEqual(['retry']);
    });

    it('tells the handler whether an earlier attempt may have written: a redelivery may have, a first delivery has not', async () => {
      const { definition, calls } = noteDefinition([{ kind: 'created' }, { kind: 'duplicate' }]);
      const { pipeline } = pipelineOn(definition, new InMemoryDocumentStore());
      await pipeline.consume(delivery('n-3', 1), { id: 'a' }, new RecordingLog());
      await pipeline.consume(delivery('n-3', 2), { id: 'a' }, new RecordingLog());
      expect(calls.deliveries.map((d) => d.history.previousAttemptMayHaveWritten)).toEqual([false, true]);
    });
  });

  describe('a conflict the handler finds', () => {
    it("is recorded with its evidence in the order's partition when the definition names the order", async () => {
      const store = new InMemoryDocumentStore();
      const evidence = { id: 'conflict|note|n-4' };
      const error = new PermanentMessageError('PayloadConflict', 'another note under this key', 'note|n-4');
      const { definition } = noteDefinition([{ kind: 'conflict', error, evidence }], 'name-the-order');
      const { pipeline } = pipelineOn(definition, store);
      const result = await pipeline.consume(delivery('n-4'), { id: 'a' }, new RecordingLog());
      expect(result.outcome.kind).toBe('conflict');
      expect((await store.read<RejectionDocument>('a', rejectionDocumentId('n-4', 'notes')))?.document).toMatchObject({
        messageOrderId: 'a',
        conflictDocumentId: evidence.id,
      });
      expect(await store.read('a', evidence.id)).toBeDefined();
    });

    it('is recorded by MessageId alone, naming no order, when the definition says message-only', async () => {
      const store = new InMemoryDocumentStore();
      const error = new PermanentMessageError('PayloadConflict', 'another note under this key', 'note|n-5');
      const { definition } = noteDefinition([{ kind: 'conflict', error, evidence: { id: 'conflict|note|n-5' } }], 'message-only');
      const { pipeline } = pipelineOn(definition, store);
      await pipeline.consume(delivery('n-5'), { id: 'a' }, new RecordingLog());
      const record = await store.read<RejectionDocument>(rejectedMessagesPartition('n-5'), rejectionDocumentId('n-5', 'notes'));
      expect(record?.document).toMatchObject({ reason: 'PayloadConflict' });
      expect(record?.document.messageOrderId).toBeUndefined();
      expect(await store.read('a', rejectionDocumentId('n-5', 'notes'))).toBeUndefined();
    });
  });
});
