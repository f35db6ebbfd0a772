// A third Service Bus consumer on the project's pipeline (src/consumer), beside orders and shipments:
// the loyalty queue. The pipeline owns keys, retries, rejection records, settlement and telemetry;
// this file owns only its messages. Compiled and run by test/docs/examples.test.ts.
import { z } from 'zod';
import { ConsumerPipeline, contentOf, keyOf } from '../../src/consumer/index.js';
import type { ConsumerDefinition, ConsumerRuntime, PipelineOptions, ReceivedMessage } from '../../src/consumer/index.js';
import { PermanentMessageError, create, createOrClassify, failureCodes, fingerprintPayload, readAndClassify, replace } from '../../src/idempotency/index.js';
import type { ExistingRecord, ProcessingOutcome } from '../../src/idempotency/index.js';

// 1. One schema per message type.
const points = z.number().int().positive().max(1_000_000);
const schemas = {
  PointsEarned: z.object({ customerId: z.string().min(1).max(64), points }),
  PointsRedeemed: z.object({ customerId: z.string().min(1).max(64), points }),
};
type LoyaltyType = keyof typeof schemas;
type LoyaltyMessage = { type: LoyaltyType; key: string; fingerprint: string; customerId: string; points: number };

// 2. One parse: the type from the subject, the payload through its schema. Throw for what no redelivery fixes.
function parseLoyaltyMessage(message: ReceivedMessage): LoyaltyMessage {
  const { cloudEvent, payload } = contentOf(message); // read once, bounded, by the pipeline
  const key = keyOf(message.envelope, cloudEvent, 'loyalty')?.value;
  if (key === undefined) throw new PermanentMessageError('NoDedupKey', 'the message has no key');
  const type = message.envelope.subject;
  if (type !== 'PointsEarned' && type !== 'PointsRedeemed') throw new PermanentMessageError('UnknownMessageType', `type ${JSON.stringify(type)}`, key);
  const parsed = schemas[type].safeParse(payload);
  if (!parsed.success) throw new PermanentMessageError('SchemaViolation', `${type}: ${parsed.error.issues[0]?.message}`, key);
  return { type, key, fingerprint: fingerprintPayload(type, parsed.data), ...parsed.data };
}

// 3. One handle function per type. A reason of this domain's own is declared once (stored in rejection records).
const loyaltyFailure = failureCodes(['NotEnoughPoints']);
const handlers: Record<LoyaltyType, (m: LoyaltyMessage, balance: number) => number | PermanentMessageError> = {
  PointsEarned: (m, balance) => balance + m.points,
  PointsRedeemed: (m, balance) =>
    m.points <= balance ? balance - m.points : new PermanentMessageError(loyaltyFailure.NotEnoughPoints, `${m.points} points asked, ${balance} held`, m.key),
};

// Its own container, partitioned on /customerId: every document carries the key it is stored under.
interface Account {
  id: string;
  customerId: string;
  balance: number;
}

/** The marker and the balance commit in one batch: either both exist or neither. */
async function applyOnce(m: LoyaltyMessage, runtime: ConsumerRuntime): Promise<ProcessingOutcome> {
  const marker = { id: `inbox|${m.key}`, customerId: m.customerId, fingerprint: m.fingerprint, ttl: runtime.markerTtlSeconds };
  const isSame = (stored: typeof marker) => stored.fingerprint === m.fingerprint;
  for (let attempt = 1; attempt <= runtime.maxConcurrencyAttempts; attempt += 1) {
    const account = await runtime.store.read<Account>(m.customerId, m.customerId);
    const balance = handlers[m.type](m, account?.document.balance ?? 0);
    if (balance instanceof PermanentMessageError) {
      // A refusal judged on a balance this very message may already have changed (its commit applied,
      // the answer lost, the message delivered again): its marker decides first.
      const earlier = await readAndClassify(runtime.store, m.customerId, marker.id, isSame);
      return earlier.kind === 'vanished' ? { kind: 'invalid', error: balance } : outcomeOf(earlier, m);
    }
    const next = { id: m.customerId, customerId: m.customerId, balance };
    // The core's one duplicate-or-conflict decision: on the marker's 409 it reads the marker once and compares.
    const result = await createOrClassify(runtime.store, m.customerId, [create(marker), account ? replace(next, account.etag) : create(next)], isSame);
    if (result.kind === 'committed') return { kind: 'created' };
    if (result.kind === 'same-request' || result.kind === 'other-request') return outcomeOf(result, m);
    // vanished (the marker expired between the 409 and the read) or the account changed: read again.
  }
  return { kind: 'retry', reason: 'the account kept changing' };
}

/** The marker found: this message again (a duplicate), or another one under its key (a conflict, never silently dropped). */
function outcomeOf(found: ExistingRecord<{ id: string; fingerprint: string }>, m: LoyaltyMessage): ProcessingOutcome {
  if (found.kind === 'same-request') return { kind: 'duplicate' };
  const description = `another message under this key (stored fingerprint ${found.existing.document.fingerprint})`;
  return { kind: 'conflict', error: new PermanentMessageError('PayloadConflict', description, m.key) };
}

export function loyaltyConsumer(options: PipelineOptions): ConsumerPipeline<LoyaltyMessage> {
  const definition: ConsumerDefinition<LoyaltyMessage> = {
    parse: parseLoyaltyMessage,
    factsOf: (m) => ({ dedupKey: m?.key, type: m?.type }),
    handle: async (m) => ({ outcome: await applyOnce(m, options) }),
    startInvocation: () => undefined,
    rejectionRecords: 'message-only',
  };
  return new ConsumerPipeline(definition, { ...options, consumerName: 'loyalty' });
}
