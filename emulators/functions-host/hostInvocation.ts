import { randomBytes, randomUUID } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, isSpanContextValid, propagation, trace } from '@opentelemetry/api';
import { programmingModel, registeredHooks } from './functionsCore.js';
import type { RegisteredFunction } from './functionsCore.js';

/** One Service Bus delivery, described with the host's (.NET) property names and types. */
export interface ServiceBusDelivery {
  readonly body: string | Uint8Array;
  readonly messageId?: string;
  readonly correlationId?: string;
  readonly contentType?: string;
  readonly subject?: string;
  readonly deliveryCount: number;
  readonly sequenceNumber: number;
  readonly enqueuedTime?: Date;
  readonly expiresAt?: Date;
  readonly lockToken?: string;
  readonly deadLetterSource?: string;
  readonly sessionId?: string;
  readonly applicationProperties?: Readonly<Record<string, string | number | boolean>>;
}

export type LogLevel = 'trace' | 'debug' | 'information' | 'warning' | 'error' | 'critical' | 'none';

export interface InvocationResult {
  readonly invocationId: string;
  /** What the handler threw: the host abandons the message (or dead-letters it at maxDeliveryCount). */
  readonly error?: unknown;
  readonly logs: { level: LogLevel; message: string }[];
  /** The function's return value as the library converts it for the host (an HTTP response: `{ http: ... }`). */
  readonly returnValue?: unknown;
}

/**
 * Invokes a registered Service Bus–triggered function the way the Functions host and Node worker
 * do: trigger metadata as RPC typed data with the host's PascalCase names, nulls left out, integers
 * and dates as JSON (research/README.md section 2), converted by the library's own invocation
 * model (camelCase, JSON bodies parsed), then the handler called by that model.
 */
export async function invokeServiceBusFunction(fn: RegisteredFunction, delivery: ServiceBusDelivery): Promise<InvocationResult> {
  const data = typeof delivery.body === 'string' ? { string: delivery.body } : { bytes: delivery.body };
  const diagnosticId = delivery.applicationProperties?.['Diagnostic-Id'];
  return invokeRegisteredFunction(fn, data, rpcTriggerMetadata(delivery), typeof diagnosticId === 'string' ? diagnosticId : undefined);
}

/** RPC typed data, as the host sends a trigger's value and each metadata field. */
export type RpcTypedData = { string: string } | { json: string } | { bytes: Uint8Array } | { http: RpcHttpRequest };

/** An HTTP trigger's input as the host sends it over gRPC (RpcHttp). */
export interface RpcHttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly query: Record<string, string>;
  readonly params: Record<string, string>;
  readonly body?: { bytes: Uint8Array };
}

/**
 * One invocation of any registered function: the library's own invocation model converts the input
 * and calls the handler. `parentTraceparent` is what the trigger carried (a message's Diagnostic-Id,
 * a request's traceparent). As the host does, the invocation is a span of its own, a child of that
 * parent, exported as a request when telemetry is on (then its context is the worker's traceParent).
 */
export async function invokeRegisteredFunction(
  fn: RegisteredFunction,
  data: RpcTypedData,
  triggerMetadata: Record<string, RpcTypedData>,
  parentTraceparent?: string,
): Promise<InvocationResult> {
  const parent = parentTraceparent ? propagation.extract(ROOT_CONTEXT, { traceparent: parentTraceparent }) : ROOT_CONTEXT;
  const span = trace
    .getTracer('local-functions-host')
    .startSpan(fn.metadata.name, { kind: SpanKind.SERVER, attributes: { 'faas.name': fn.metadata.name } }, parent);
  const context = span.spanContext();
  const traceParent = isSpanContextValid(context)
    ? `00-${context.traceId}-${context.spanId}-0${context.traceFlags & 1}`
    : invocationTraceParent(parentTraceparent);
  try {
    const result = await invokeWithTraceParent(fn, data, triggerMetadata, traceParent);
    span.setAttribute('faas.invocation_id', result.invocationId);
    span.setStatus({ code: result.error === undefined ? SpanStatusCode.OK : SpanStatusCode.ERROR });
    return result;
  } finally {
    span.end();
  }
}

async function invokeWithTraceParent(
  fn: RegisteredFunction,
  data: RpcTypedData,
  triggerMetadata: Record<string, RpcTypedData>,
  traceParent: string,
): Promise<InvocationResult> {
  const invocationId = randomUUID();
  const logs: InvocationResult['logs'] = [];
  const triggerName = Object.entries(fn.metadata.bindings).find(([, b]) => b.direction === 'in' && String(b.type).endsWith('Trigger'))?.[0];
  if (!triggerName) throw new Error(`function ${fn.metadata.name} has no trigger binding`);
  const invocation: { context?: unknown } = {};
  const hookData: Record<string, unknown> = {};
  const coreContext = {
    invocationId,
    metadata: fn.metadata,
    state: 'invocation',
    // As the worker does: each log line goes through the app's log hooks (an OpenTelemetry exporter, say) first.
    log: (level: LogLevel, category: string, message: string) => {
      for (const hook of registeredHooks('log')) hook({ level, category, message, invocationContext: invocation.context, hookData, appHookData: {} });
      logs.push({ level, message });
    },
    request: { inputData: [{ name: triggerName, data }], triggerMetadata, traceContext: { traceParent, traceState: '', attributes: {} } },
  };
  const model = programmingModel().getInvocationModel(coreContext);
  const { context, inputs } = await model.getArguments();
  invocation.context = context;
  try {
    // The worker's order: preInvocation hooks (which may wrap the handler), the handler, postInvocation hooks.
    const pre = { invocationContext: context, inputs, functionCallback: fn.callback, hookData, appHookData: {} };
    for (const hook of registeredHooks('preInvocation')) await hook(pre);
    let result: unknown;
    let error: unknown;
    try {
      result = await model.invokeFunction(context, pre.inputs, pre.functionCallback);
    } catch (thrown) {
      error = thrown ?? new Error('the function threw nothing');
    }
    const post = { invocationContext: context, inputs: pre.inputs, result, error, hookData, appHookData: {} };
    for (const hook of registeredHooks('postInvocation')) await hook(post);
    if (post.error !== undefined) return { invocationId, error: post.error, logs };
    const response = await model.getResponse(context, post.result);
    return { invocationId, logs, returnValue: response.returnValue };
  } catch (error) {
    return { invocationId, error, logs };
  }
}

/**
 * The host starts an activity per invocation, a child of the message's `Diagnostic-Id` when it has
 * one (the Service Bus SDKs' trace context property), and passes it to the worker as `traceParent`.
 */
export function invocationTraceParent(diagnosticId: unknown): string {
  const match = typeof diagnosticId === 'string' ? traceparentPattern.exec(diagnosticId.trim().toLowerCase()) : null;
  const spanId = nonZeroHex(8);
  if (match && !/^0+$/.test(match[1] ?? '')) return `00-${match[1]}-${spanId}-${match[3]}`;
  return `00-${nonZeroHex(16)}-${spanId}-01`;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** W3C Trace Context forbids an all-zero trace or span id. */
function nonZeroHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString('hex');
    if (!/^0+$/.test(hex)) return hex;
  }
}

/** ServiceBusTriggerBindingStrategy's binding data, as GrpcMessageConversionExtensions sends it. */
export function rpcTriggerMetadata(d: ServiceBusDelivery): Record<string, RpcTypedData> {
  const enqueued = d.enqueuedTime ?? new Date();
  const expires = d.expiresAt ?? new Date(enqueued.getTime() + 14 * 24 * 3600 * 1000);
  const fields: Record<string, unknown> = {
    MessageId: d.messageId,
    CorrelationId: d.correlationId,
    ContentType: d.contentType,
    Subject: d.subject,
    Label: d.subject,
    DeliveryCount: d.deliveryCount,
    SequenceNumber: d.sequenceNumber,
    EnqueuedTimeUtc: enqueued,
    EnqueuedTime: enqueued,
    ExpiresAtUtc: expires,
    ExpiresAt: expires,
    LockToken: d.lockToken ?? randomUUID(),
    DeadLetterSource: d.deadLetterSource,
    SessionId: d.sessionId,
    ApplicationProperties: d.applicationProperties ?? {},
    UserProperties: d.applicationProperties ?? {},
    MessageActions: {},
    sys: { MethodName: 'processOrder', UtcNow: new Date(), RandGuid: randomUUID() },
  };
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([key, value]) => [key, typeof value === 'string' ? { string: value } : { json: JSON.stringify(value) }]),
  );
}
