import type { Settings } from '../config.js';
import { resolveRuntime } from '../consumer/index.js';
import type { RuntimeOverrides } from '../consumer/index.js';
import { TransientStoreError } from '../idempotency/index.js';
import { RequestMetrics } from '../telemetry/index.js';
import type { LogSink } from '../telemetry/index.js';
import { acceptOrderOnce, answerStoredUnderRefusedKey, releaseKey } from './acceptOrder.js';
import type { CallerOrderRequest, IntakeContext, IntakeResult } from './acceptOrder.js';
import { callerScope, readIntakeCaller } from './intakeCaller.js';
import { problem, replayedHeader } from './intakeResponse.js';
import type { IntakeResponse } from './intakeResponse.js';
import { isOrderRequest, readOrderRequest } from './readOrderRequest.js';
import type { IntakeHttpRequest } from './readOrderRequest.js';

export interface IntakeInvocation {
  /** Owns the key while this request is handled: the Functions invocation id. */
  readonly invocationId: string;
  readonly log: LogSink;
  /** The invocation's W3C trace context: the OrderPlaced event carries it to the consumer. */
  readonly traceparent?: string;
}

/** The one line written per request: the key, the order and what became of it. */
export interface RequestLogRecord {
  readonly event: 'order-request';
  readonly outcome: IntakeResult['outcome'] | 'refused' | 'unavailable';
  readonly status: number;
  readonly idempotencyKey?: string;
  /** `entra:<object id>` with INTAKE_CALLER_IDENTITY=entra; absent in the shared scope. */
  readonly caller?: string;
  readonly orderId?: string;
  readonly replayed: boolean;
  readonly durationMs: number;
  readonly reason?: string;
}

/** Seconds a client waits after a 503: the store's own throttling answers clear in about that. */
export const unavailableRetryAfterSeconds = 5;

/** POST /api/orders: reads the request, accepts the order once per key, and answers. */
export class OrderIntake {
  constructor(
    private readonly ctx: IntakeContext,
    private readonly maxBodyBytes: number,
    private readonly metrics?: RequestMetrics,
  ) {}

  private log(sink: LogSink, record: RequestLogRecord): void {
    log(sink, record, this.metrics);
  }

  /** The caller first: an unauthenticated request is refused before its body is read. */
  private async readRequest(request: IntakeHttpRequest): Promise<CallerOrderRequest | IntakeResponse> {
    const caller = readIntakeCaller(request.headers, this.ctx.callerIdentity);
    if (!('kind' in caller)) return caller;
    const read = await readOrderRequest(request, this.maxBodyBytes);
    return isOrderRequest(read) ? { ...read, caller } : read;
  }

  async handle(request: IntakeHttpRequest, invocation: IntakeInvocation): Promise<IntakeResponse> {
    const started = Date.now();
    const read = await this.readRequest(request);
    if (!isOrderRequest(read)) return this.refuse(read, invocation, started);
    const { caller, refusedUnlessStored } = read;
    const scope = callerScope(caller);
    const base = {
      event: 'order-request',
      idempotencyKey: read.idempotencyKey,
      ...(scope === undefined ? {} : { caller: scope }),
      orderId: read.order.orderId,
    } as const;
    try {
      const result = refusedUnlessStored
        ? await answerStoredUnderRefusedKey(read, this.ctx)
        : await acceptOrderOnce(read, invocation.invocationId, this.ctx, invocation.traceparent);
      if (!result) return this.refuse(refusedUnlessStored as IntakeResponse, invocation, started);
      this.log(invocation.log, {
        ...base,
        outcome: result.outcome,
        status: result.response.status,
        replayed: result.response.headers[replayedHeader] === 'true',
        durationMs: Date.now() - started,
        // Stryker disable next-line ConditionalExpression,EqualityOperator: acceptOrderOnce answers no 400, and a 2xx body has no problem type, whose undefined reason the JSON line leaves out
        ...(result.response.status >= 400 ? { reason: problemType(result.response) } : {}),
      });
      return result.response;
    } catch (error) {
      if (!(error instanceof TransientStoreError)) throw error;
      // Hand the key back so that the retry we ask for is not told "in progress" for a lease's length.
      // Safe even if our batch was applied unseen: the retry finds its claim and replays it. (A key
      // only read, never taken, is not ours: releaseKey leaves a record another owner holds.)
      await releaseKey(read.idempotencyKey, caller, invocation.invocationId, this.ctx).catch(() => undefined);
      this.log(invocation.log, { ...base, outcome: 'unavailable', status: 503, replayed: false, durationMs: Date.now() - started, reason: error.message });
      return storeUnavailable();
    }
  }

  /** A request refused before anything is written: logged with the problem's type as its reason. */
  private refuse(refusal: IntakeResponse, invocation: IntakeInvocation, started: number): IntakeResponse {
    this.log(invocation.log, {
      event: 'order-request',
      outcome: 'refused',
      status: refusal.status,
      replayed: false,
      durationMs: Date.now() - started,
      reason: problemType(refusal),
    });
    return refusal;
  }
}

export type IntakeOverrides = Pick<RuntimeOverrides, 'meter' | 'now' | 'store'>;

/** The intake from validated settings: the same store (one Cosmos client per process) as the consumers. */
export function createOrderIntake(settings: Settings, overrides: IntakeOverrides = {}): OrderIntake {
  const { store, now, meter } = resolveRuntime(settings, overrides);
  return new OrderIntake(
    {
      store,
      now,
      ordersQueueName: settings.ordersQueueName,
      keyRetentionSeconds: settings.intake.keyRetentionSeconds,
      leaseSeconds: settings.intake.leaseSeconds,
      maxConcurrencyAttempts: settings.maxConcurrencyAttempts,
      callerIdentity: settings.intake.callerIdentity,
    },
    settings.intake.maxBodyBytes,
    new RequestMetrics(meter),
  );
}

/**
 * Never "nothing was accepted": this request's batch may have been applied with its answer lost,
 * or an earlier copy of the request accepted. What is certain is that a retry gets the answer.
 */
function storeUnavailable(): IntakeResponse {
  const detail =
    'the order store is unavailable for now, so this request has no answer yet; retry with the same Idempotency-Key and body: the retry gets the answer (the same 202 if the order was accepted), never a second order';
  return problem(503, 'store-unavailable', 'Try again shortly', detail, {}, { 'Retry-After': String(unavailableRetryAfterSeconds) });
}

function problemType(response: IntakeResponse): string | undefined {
  // Stryker disable next-line OptionalChaining: called with problem answers only, which always have a body
  const type = (response.body as { type?: unknown } | undefined)?.type;
  // Stryker disable next-line ConditionalExpression: a problem's type is always a string
  return typeof type === 'string' ? type.slice(type.lastIndexOf(':') + 1) : undefined;
}

/** A conflict or a key reused needs a person: error. A refusal or a wait is the client's to fix: warning. */
function log(sink: LogSink, record: RequestLogRecord, metrics?: RequestMetrics): void {
  metrics?.record(record.outcome, record.status, record.durationMs);
  const line = JSON.stringify(record);
  if (record.outcome === 'conflict' || record.outcome === 'invalid') sink.error(line);
  else if (record.outcome === 'refused' || record.outcome === 'retry' || record.outcome === 'unavailable') sink.warn(line);
  else sink.info(line);
}
