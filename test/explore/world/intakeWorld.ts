import { metrics } from '@opentelemetry/api';
import type { Scheduler } from 'fast-check';
import { loadSettings } from '../../../src/config.js';
import type { Settings } from '../../../src/config.js';
import { InMemoryDocumentStore, TransientStoreError, fingerprintPayload } from '../../../src/idempotency/index.js';
import type { CommitResult, DocumentStore, StoredDocument, WriteOperation } from '../../../src/idempotency/index.js';
import { createOrderIntake, orderIntakeClaimId } from '../../../src/intake/index.js';
import type { IntakeKeyRecord, IntakeResponse, OrderIntakeClaim } from '../../../src/intake/index.js';
import { orderPlacedSchema } from '../../../src/orders/schemas.js';
import type { LogSink } from '../../../src/telemetry/index.js';
import { orderRequest } from '../../support/intakeHarness.js';
import { AwaitPoints } from './awaitPoints.js';
import type { Actor } from './awaitPoints.js';
import type { ClientPlan, IntakeScenario } from './intakeScenario.js';
import { intakeBodies, intakeExpiringKeyRetentionSeconds, intakeExpiringKeyRetryHorizonSeconds, intakeLeaseSeconds } from './intakeScenario.js';
import { untilIdle, worldStartMs } from './orderWorld.js';
import { ReadFates, withReadFates } from './readFates.js';
import { ScheduledStore } from './scheduledStore.js';
import { Timeline } from './timeline.js';

export interface IntakeWorldOptions {
  /**
   * The defect of b3da7f3, fixed by 9dcb195 (`commitOrJudgeByClaim`): a claim batch whose answer
   * was lost is taken as not applied and answered 503, though it may have been. Reproduced by
   * refusing the invocation's read-back of its claim, so the batch's error goes on to the 503
   * as it did before the claim was read back.
   */
  readonly noClaimReadBack?: boolean;
  /**
   * Key records kept only `intakeExpiringKeyRetentionSeconds` (the scenario's ticks may be that long,
   * and the backstop's moves add up to it): a record runs out under a request still handled or retried.
   */
  readonly keysExpire?: boolean;
}

/** One invocation of the intake for one client's attempt, and what the world saw of it. */
export interface IntakeAttempt {
  readonly name: string;
  readonly client: ClientPlan;
  /** What the intake answered (undefined: the invocation died). */
  response?: IntakeResponse;
  /** The store applied this invocation's own claim batch (its answer heard or lost). */
  ownClaimApplied: boolean;
  /** The store refused to answer this invocation's read-back of its claim after its claim batch failed. */
  readBackRefused: boolean;
  /** The store showed this invocation its request's claim (same key and body). */
  sawOwnClaim: boolean;
  /** The commits the store had applied when this invocation started (`AppliedBatches.appliedCount`). */
  readonly startedAfterCommits: number;
}

export interface ClientRecord {
  readonly plan: ClientPlan;
  readonly fingerprint: string;
  readonly attempts: IntakeAttempt[];
  /** The last answer the client heard. */
  heard?: IntakeResponse;
}

/**
 * The in-memory store, remembering which batches it applied (the very operations array the
 * invocation sent: the scheduled store passes it through). Whether an invocation's own claim batch
 * was applied cannot be read off the claim: two copies of one request in the same second write
 * identical claims, and the one whose batch met the other's (409) did not apply its own.
 */
export class AppliedBatches extends InMemoryDocumentStore {
  readonly applied = new WeakSet<readonly WriteOperation[]>();
  /** Commits applied so far: a count that orders them against the start of an invocation. */
  appliedCount = 0;
  /** Per order, the `appliedCount` its claim batch made. */
  readonly claimAppliedAt = new Map<string, number>();
  override async commit(partitionKey: string, operations: readonly WriteOperation[]): Promise<CommitResult> {
    const result = await super.commit(partitionKey, operations);
    if (result.kind === 'committed') {
      this.applied.add(operations);
      this.appliedCount += 1;
      if (operations.some((op) => (op.document as { docType?: string }).docType === 'intake')) this.claimAppliedAt.set(partitionKey, this.appliedCount);
    }
    return result;
  }
}

export interface IntakeRun {
  /** Key records may have run out: a key's final record need not be the one its client's requests met. */
  readonly keysExpire: boolean;
  readonly memory: AppliedBatches;
  readonly timeline: Timeline;
  readonly clients: readonly ClientRecord[];
  readonly stuck: readonly string[];
}

/** Attempts a client makes on its own before the world moves the clock past the lease for the stragglers. */
export const attemptsBeforeBackstop = 6;

const silent: LogSink = { info: () => undefined, warn: () => undefined, error: () => undefined };
const meter = metrics.getMeter('explore');
const worldSettings = {
  ServiceBusConnection: 'Endpoint=sb://127.0.0.1/;SharedAccessKeyName=k;SharedAccessKey=k',
  ORDERS_QUEUE_NAME: 'orders',
  COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
  INTAKE_LEASE_SECONDS: String(intakeLeaseSeconds),
  RETRY_STATE_SIGNING_KEY: 'k'.repeat(32),
};
const settings: Settings = loadSettings(worldSettings);
const expiringKeySettings: Settings = loadSettings({
  ...worldSettings,
  INTAKE_KEY_RETENTION_SECONDS: String(intakeExpiringKeyRetentionSeconds),
  INTAKE_CLIENT_RETRY_HORIZON_SECONDS: String(intakeExpiringKeyRetryHorizonSeconds),
});

/** An answer the client must ask again about: the store unavailable, or the first request still in progress. */
export function asksForRetry(response: IntakeResponse): boolean {
  return response.status === 503 || problemCode(response) === 'request-in-progress';
}

export function problemCode(response: IntakeResponse): string | undefined {
  const type = (response.body as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' ? type.slice(type.lastIndexOf(':') + 1) : undefined;
}

export function describeResponse(response: IntakeResponse): string {
  const body = response.body as { messageId?: string; acceptedAt?: string };
  const replayed = response.headers['Idempotent-Replayed'] === 'true' ? ' replayed' : '';
  return response.status === 202 ? `202${replayed} (${body.messageId} at ${body.acceptedAt})` : `${response.status} ${problemCode(response) ?? ''}`;
}

export const fingerprintOfBody = (plan: ClientPlan): string => fingerprintPayload('OrderPlaced', orderPlacedSchema.parse(intakeBodies[plan.body]));

/**
 * The HTTP intake (createOrderIntake, one invocation per attempt) in a world fast-check controls:
 * clients send their requests concurrently, each retrying after a 503, a "still in progress" 409
 * (waiting its Retry-After on the shared clock) or no answer at all (the invocation died, or its
 * answer was lost on the way back). Every store call is a scheduler task, every write has its fate.
 * Runs to idle; then, while a client has no final answer, moves the clock past the lease and lets
 * every such client ask again.
 */
export async function runIntakeWorld(scenario: IntakeScenario, s: Scheduler, options: IntakeWorldOptions = {}): Promise<IntakeRun> {
  let nowMs = worldStartMs;
  const timeline = new Timeline(() => nowMs, worldStartMs);
  const memory = new AppliedBatches(() => nowMs);
  const points = new AwaitPoints(s, timeline);
  const store = new ScheduledStore(memory, points, { fates: scenario.fates });
  const readFates = new ReadFates(scenario.readFates);
  const now = () => new Date(nowMs);
  const running = new Set<string>();
  const clients: ClientRecord[] = scenario.clients.map((plan) => ({ plan, fingerprint: fingerprintOfBody(plan), attempts: [] }));
  let invocations = 0;
  let backstop = false;

  const isOwn = (client: ClientRecord, document: StoredDocument | undefined): boolean => {
    const claim = document as OrderIntakeClaim | undefined;
    return claim?.docType === 'intake' && claim.idempotencyKey === client.plan.key && claim.fingerprint === client.fingerprint;
  };

  /** The invocation's store: notes what it was shown and what of its own was applied; the defect switch acts here. */
  const storeFor = (actor: Actor, client: ClientRecord, attempt: IntakeAttempt): DocumentStore => {
    const inner = withReadFates(store.forActor(actor), actor, points, readFates);
    let claimBatchFailed = false;
    return {
      find: (query) => inner.find(query),
      read: async (partitionKey, id) => {
        const readingBack = claimBatchFailed && id === orderIntakeClaimId(partitionKey);
        if (readingBack) {
          claimBatchFailed = false;
          timeline.count('claim read back after its batch failed');
          if (options.noClaimReadBack) {
            timeline.add(actor.name, `read ${partitionKey}/${id} -> not read back (defect noClaimReadBack)`);
            throw new TransientStoreError('the claim is not read back (defect noClaimReadBack)', 503);
          }
        }
        const found = await inner.read(partitionKey, id).catch((error: unknown) => {
          if (readingBack) attempt.readBackRefused = true;
          throw error;
        });
        if (isOwn(client, found?.document)) attempt.sawOwnClaim = true;
        return found as never;
      },
      commit: async (partitionKey, operations) => {
        const claim = operations.find((op) => (op.document as { docType?: string }).docType === 'intake')?.document;
        const record = operations.find((op) => (op.document as { docType?: string }).docType === 'intake-key')?.document as IntakeKeyRecord | undefined;
        if (record && record.attempt > 1 && record.state === 'in-progress' && record.owner === actor.name) timeline.count('lease taken over');
        try {
          return await inner.commit(partitionKey, operations);
        } catch (error) {
          if (claim) claimBatchFailed = true;
          throw error;
        } finally {
          if (claim && memory.applied.has(operations)) attempt.ownClaimApplied = true;
        }
      },
    };
  };

  const retryLater = (client: ClientRecord, why: string, waitSeconds: number): void => {
    if (backstop || client.attempts.length >= attemptsBeforeBackstop) return;
    void s.schedule(Promise.resolve(), `${client.plan.client}: waits ${waitSeconds} s and asks again (${why})`).then(() => {
      nowMs += waitSeconds * 1000;
      timeline.add(client.plan.client, `waited ${waitSeconds} s (${why})`);
      return attempt(client, true);
    });
  };

  const attempt = async (client: ClientRecord, mayFail: boolean): Promise<void> => {
    const index = invocations;
    invocations += 1;
    const name = `${client.plan.client}#${client.attempts.length + 1}`;
    const record: IntakeAttempt = {
      name,
      client: client.plan,
      ownClaimApplied: false,
      readBackRefused: false,
      sawOwnClaim: false,
      startedAfterCommits: memory.appliedCount,
    };
    client.attempts.push(record);
    const crash = mayFail ? scenario.crashes.find((c) => c.invocation === index) : undefined;
    const actor: Actor = {
      name,
      awaits: 0,
      ...(crash ? { crashAt: { atAwait: crash.atAwait, afterApplying: crash.afterApplying } } : {}),
      onCrash: () => {
        running.delete(name);
        timeline.add(client.plan.client, 'the connection was reset: no answer');
        retryLater(client, 'no answer', 1);
      },
    };
    running.add(name);
    timeline.add(name, `POST /api/orders, Idempotency-Key ${client.plan.key}, body ${client.plan.body}`);
    const intake = createOrderIntake(options.keysExpire ? expiringKeySettings : settings, { store: storeFor(actor, client, record), now, meter });
    const response = await intake.handle(orderRequest(client.plan.key, intakeBodies[client.plan.body]), { invocationId: name, log: silent });
    running.delete(name);
    record.response = response;
    timeline.count(`answered ${response.status} ${problemCode(response) ?? (response.headers['Idempotent-Replayed'] === 'true' ? 'replayed' : 'accepted')}`);
    if (mayFail && scenario.answersLost.includes(index)) {
      timeline.add(name, `answers ${describeResponse(response)}, ANSWER LOST on the way back`);
      timeline.count('answer lost on the way back');
      retryLater(client, 'no answer', 1);
      return;
    }
    timeline.add(name, `answers ${describeResponse(response)}`);
    client.heard = response;
    if (asksForRetry(response)) retryLater(client, describeResponse(response), Number(response.headers['Retry-After'] ?? 1));
  };

  for (const client of clients) void s.schedule(Promise.resolve(), `${client.plan.client}: sends`).then(() => attempt(client, true));
  scenario.ticks.forEach(
    (seconds, i) =>
      void s.schedule(Promise.resolve(), `clock: +${seconds} s (tick ${i})`).then(() => {
        nowMs += seconds * 1000;
        timeline.add('clock', `+${seconds} s`);
      }),
  );
  await untilIdle(s);

  backstop = true;
  const unanswered = () => clients.filter((c) => c.heard === undefined || asksForRetry(c.heard));
  for (let round = 0; round < scenario.fates.length + scenario.readFates.length + clients.length + 3 && unanswered().length > 0; round += 1) {
    nowMs += (intakeLeaseSeconds + 1) * 1000;
    timeline.add('clock', `+${intakeLeaseSeconds + 1} s: past any lease; every client still without an answer asks again`);
    for (const client of unanswered()) void s.schedule(Promise.resolve(), `${client.plan.client}: asks again`).then(() => attempt(client, false));
    await untilIdle(s);
  }
  return { keysExpire: options.keysExpire === true, memory, timeline, clients, stuck: [...running] };
}
